// Choose one item from a list: arrows move, typing filters, Enter picks, Esc cancels.
import React, { useState } from 'react';
import { Box, Text, useInput } from 'ink';

export interface PickerItem<V> {
  label: string;
  value: V;
  hint?: string;
}

export interface PickerProps<V> {
  title: string;
  items: PickerItem<V>[];
  initialValue?: V;
  onPick: (value: V) => void;
  onCancel: () => void;
}

export function Picker<V>({ title, items, initialValue, onPick, onCancel }: PickerProps<V>) {
  const [filter, setFilter] = useState('');
  const start = Math.max(
    0,
    items.findIndex((item) => item.value === initialValue),
  );
  const [cursor, setCursor] = useState(start);
  const visible = items.filter((item) =>
    `${item.label} ${item.hint ?? ''}`.toLowerCase().includes(filter.toLowerCase()),
  );
  const index = Math.min(cursor, Math.max(0, visible.length - 1));

  useInput((input, key) => {
    if (key.escape) return onCancel();
    if (key.return) {
      const chosen = visible[index];
      if (chosen) onPick(chosen.value);
      return;
    }
    if (key.upArrow) return setCursor(Math.max(0, index - 1));
    if (key.downArrow) return setCursor(Math.min(visible.length - 1, index + 1));
    if (key.backspace || key.delete) return setFilter((current) => current.slice(0, -1));
    if (input && !key.ctrl && !key.meta) {
      setFilter((current) => current + input);
      setCursor(0);
    }
  });

  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      {filter ? <Text dimColor>filter: {filter}</Text> : null}
      {visible.length === 0 ? <Text dimColor>No match.</Text> : null}
      {visible.map((item, position) => (
        <Text key={`${item.label}-${position}`} color={position === index ? 'cyan' : undefined}>
          {position === index ? '❯ ' : '  '}
          {item.label}
          {item.hint ? <Text dimColor> {item.hint}</Text> : null}
        </Text>
      ))}
      <Text dimColor>↑/↓ move · type to filter · Enter choose · Esc cancel</Text>
    </Box>
  );
}
