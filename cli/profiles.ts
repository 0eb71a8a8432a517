// Named profiles (base URL, tokens, current tenant) in one file readable only by its owner.
import Conf from 'conf';

export interface Profile {
  baseUrl?: string;
  email?: string;
  accessToken?: string;
  refreshToken?: string;
  tenantId?: string;
  tenantName?: string;
  /** Absolute path of the private CA's PEM given at login or register (--ca), trusted by later commands. */
  caFile?: string;
}

interface ProfileFile extends Record<string, unknown> {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,49}$/;

export class ProfileStore {
  private readonly conf: Conf<ProfileFile>;

  constructor(options: { cwd?: string } = {}) {
    this.conf = new Conf<ProfileFile>({
      projectName: 'svc',
      projectSuffix: '',
      configName: 'profiles',
      // Tokens live here: owner-only, like ~/.ssh keys.
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      defaults: { profiles: {} },
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
  }

  get path(): string {
    return this.conf.path;
  }

  names(): string[] {
    return Object.keys(this.conf.get('profiles'));
  }

  get(name: string): Profile {
    return this.conf.get('profiles')[name] ?? {};
  }

  /** Merges `changes` into the profile; a key set to undefined is removed. */
  update(name: string, changes: Partial<Profile>): Profile {
    if (!PROFILE_NAME.test(name)) {
      throw new Error(`"${name}" is not a valid profile name: use letters, digits, "-" and "_".`);
    }
    const profiles = { ...this.conf.get('profiles') };
    const merged: Profile = { ...profiles[name], ...changes };
    for (const key of Object.keys(merged) as (keyof Profile)[]) {
      if (merged[key] === undefined) delete merged[key];
    }
    profiles[name] = merged;
    this.conf.set('profiles', profiles);
    return merged;
  }
}
