// The contact fields as flags, shared by `contacts upsert` and `contacts patch`.
import { Flags } from '@oclif/core';

export const CONTACT_FLAGS = {
  'external-id': Flags.string({ description: "your system's id for the contact (upsert matches on it first)" }),
  'first-name': Flags.string({ description: 'first name' }),
  'last-name': Flags.string({ description: 'last name' }),
  locale: Flags.string({ description: 'language of campaign mail, e.g. es or fr-CA' }),
  'opt-in': Flags.boolean({ allowNo: true, description: 'may receive campaigns (--no-opt-in: may not)' }),
  tag: Flags.string({ multiple: true, description: "tag (repeat); replaces the contact's tags" }),
  attributes: Flags.string({ description: 'free-form attributes as a JSON object (templates read them)' }),
  project: Flags.string({ description: 'project id' }),
};
