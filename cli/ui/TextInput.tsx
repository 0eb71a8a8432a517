// A one-line input: typed characters, backspace, Enter submits; `mask` hides what is typed.
import React, { useRef } from 'react';
import { Text, useInput, type Key } from 'ink';

export interface TextInputProps {
  value: string;
  onChange: (value: string) => void;
  onSubmit: (value: string) => void;
  mask?: string;
  placeholder?: string;
  focus?: boolean;
  /**
   * Read the keyboard itself (default). Forms with several fields pass false and feed keys through
   * `editLine` from one handler of their own: a field that replaces another can miss the keys typed
   * before its subscription lands, while the old field, not yet unsubscribed, takes them.
   */
  capture?: boolean;
}

/**
 * Applies one keyboard event to a line. Keys typed fast or pasted arrive as one chunk: they are applied
 * one by one, so Backspaces (DEL or BS) in a burst delete and an Enter inside it submits; what follows
 * that Enter is returned as `rest` for the next field.
 */
export function editLine(current: string, input: string, key: Key): { value: string; submit: boolean; rest: string } {
  if (key.return) return { value: current, submit: true, rest: '' };
  // Terminals send DEL (0x7f) for the backspace key, which Ink reports as `delete`.
  if (key.backspace || key.delete) return { value: current.slice(0, -1), submit: false, rest: '' };
  if (key.ctrl || key.meta || key.tab || key.escape || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow)
    return { value: current, submit: false, rest: '' };
  let value = current;
  const characters = [...input];
  for (let index = 0; index < characters.length; index++) {
    const character = characters[index];
    if (character === '\u007f' || character === '\b') value = value.slice(0, -1);
    else if (character === '\r' || character === '\n') {
      const after = characters
        .slice(index + 1)
        .join('')
        .replace(/^\n/, '');
      return { value, submit: true, rest: after };
    } else if (character >= ' ') value += character;
  }
  return { value, submit: false, rest: '' };
}

export interface LineForm<F extends string> {
  /** The field that takes keys now, or null while none does (a request in flight). */
  field: () => F | null;
  value: (field: F) => string;
  set: (field: F, value: string) => void;
  submit: (field: F) => void;
}

/**
 * Feeds one keyboard event to a form of one-line fields. A chunk may finish one field and start the
 * next ("ops@x.test\rsecret\r"): what follows an Enter goes to the field that is current after it.
 */
export function feedForm<F extends string>(input: string, key: Key, form: LineForm<F>): void {
  let pending = input;
  let first = true;
  while (first || pending !== '') {
    const field = form.field();
    if (field === null) return;
    const edited = editLine(
      form.value(field),
      pending,
      first ? key : { ...key, return: false, backspace: false, delete: false },
    );
    first = false;
    if (edited.value !== form.value(field)) form.set(field, edited.value);
    if (!edited.submit) return;
    form.submit(field);
    pending = edited.rest;
  }
}

export function TextInput({
  value,
  onChange,
  onSubmit,
  mask,
  placeholder,
  focus = true,
  capture = true,
}: TextInputProps) {
  // Keys can arrive faster than React re-renders (typing fast, pasting): build on the last value
  // this input produced, not on the possibly stale prop.
  const latest = useRef(value);
  latest.current = value;
  useInput(
    (input, key) => {
      const edited = editLine(latest.current, input, key);
      if (edited.value !== latest.current) {
        latest.current = edited.value;
        onChange(edited.value);
      }
      if (edited.submit) onSubmit(latest.current);
    },
    { isActive: focus && capture },
  );
  const shown = mask ? mask.repeat(value.length) : value;
  // A placeholder is a hint, never a value: the cursor stands before it, where typing starts, so it
  // does not read as something already typed that Enter would accept.
  if (shown === '' && placeholder)
    return (
      <Text>
        {focus ? <Text inverse> </Text> : null}
        <Text dimColor>{placeholder}</Text>
      </Text>
    );
  return (
    <Text>
      {shown}
      {focus ? <Text inverse> </Text> : null}
    </Text>
  );
}
