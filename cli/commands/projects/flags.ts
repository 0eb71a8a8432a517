// The SMTP relay flags shared by `projects create` and `projects update`.
import { Flags } from '@oclif/core';

export const SMTP_FLAGS = {
  'smtp-host': Flags.string({ description: "the project's own SMTP relay host (mail of the project goes there)" }),
  'smtp-port': Flags.integer({
    description: 'relay port (default 587, or 465 with --smtp-secure)',
    min: 1,
    max: 65535,
  }),
  'smtp-secure': Flags.boolean({ description: 'TLS from the first byte (port 465); else STARTTLS when offered' }),
  'smtp-user': Flags.string({ description: 'relay user name' }),
  'smtp-pass-stdin': Flags.boolean({ description: 'read the relay password from stdin' }),
};
