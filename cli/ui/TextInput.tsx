// A one-line input: typed characters, backspace, Enter submits; `mask` hides what is typed.
import React, { useRef } from 'react';
import { Text, useInput } from 'ink';

export interface TextInputProps {
  value: string;
  onChange: (value: string) => void;
  onSubmit: (value: string) => void;
  mask?: string;
  placeholder?: string;
  focus?: boolean;
}

export function TextInput({ value, onChange, onSubmit, mask, placeholder, focus = true }: TextInputProps) {
  // Keys can arrive faster than React re-renders (typing fast, pasting): build on the last value
  // this input produced, not on the possibly stale prop.
  const latest = useRef(value);
  latest.current = value;
  const change = (next: string) => {
    latest.current = next;
    onChange(next);
  };
  useInput(
    (input, key) => {
      if (key.return) return onSubmit(latest.current);
      // Terminals send DEL (0x7f) for the backspace key, which Ink reports as `delete`.
      if (key.backspace || key.delete) return change(latest.current.slice(0, -1));
      if (key.ctrl || key.meta || key.tab || key.escape || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return;
      // A paste, or keys that arrive together, can carry the Enter inside the text.
      const [line, ...rest] = input.split(/\r\n|\r|\n/);
      if (line) change(latest.current + line);
      if (rest.length) onSubmit(latest.current);
    },
    { isActive: focus },
  );
  const shown = mask ? mask.repeat(value.length) : value;
  return (
    <Text>
      {shown === '' && placeholder ? <Text dimColor>{placeholder}</Text> : shown}
      {focus ? <Text inverse> </Text> : null}
    </Text>
  );
}
