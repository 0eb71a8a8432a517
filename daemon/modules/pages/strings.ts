// The words of the account pages in each language the account mails speak (auth/mails.ts). A page
// speaks the language its link carries (`lang`, set by the mail), else the browser's Accept-Language.
import { MAIL_LOCALES, pickMailLocale, type MailLocale } from '../auth/mails.ts';
import { PASSWORD_MIN_LENGTH } from '../../../shared/schemas/auth.ts';

export type PageLocale = MailLocale;

export function pickPageLocale(linkLanguage: string, acceptLanguage: string | undefined): PageLocale {
  return (MAIL_LOCALES as readonly string[]).includes(linkLanguage)
    ? (linkLanguage as PageLocale)
    : pickMailLocale(acceptLanguage);
}

/** Why a form came back: each has one sentence in every language. */
export type FormProblem =
  'password-too-short' | 'password-too-long' | 'passwords-differ' | 'name-too-long' | 'email-taken' | 'form-expired';

export interface PageStrings {
  newPassword: string;
  confirmPassword: string;
  passwordHint: string;
  email: string;
  name: string;
  nameHint: string;
  problems: Record<FormProblem, string>;
  errorHeading: string;
  reset: { title: string; intro: string; submit: string; doneTitle: string; done: string };
  verify: { title: string; intro: string; submit: string; doneTitle: string; done: string };
  invitation: {
    title: string;
    /** `{tenant}` and `{role}` are filled in. */
    intro: string;
    submit: string;
    doneTitle: string;
    done: string;
  };
  deadLink: { title: string; reset: string; verify: string; invitation: string };
  /** The dead link's form that mails a new one (reset and verify): no API call for a person with a browser. */
  newLink: { submit: string; sentTitle: string; sent: string };
  /** A form posted from another site: refused without a new form. `from`: `{origin}` and `{expected}` are filled in. */
  foreignForm: { title: string; text: string; from: string };
  signIn: string;
}

const EN: PageStrings = {
  newPassword: 'New password',
  confirmPassword: 'Repeat the new password',
  passwordHint: `At least ${PASSWORD_MIN_LENGTH} characters.`,
  email: 'E-mail address',
  name: 'Your name',
  nameHint: 'Optional.',
  problems: {
    'password-too-short': `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`,
    'password-too-long': 'The password is too long.',
    'passwords-differ': 'The two passwords are not the same.',
    'name-too-long': 'The name is too long (200 characters at most).',
    'email-taken': 'An account with this e-mail address already exists: sign in, or reset its password.',
    'form-expired': 'This form expired or did not come from this page: check the fields and send it again.',
  },
  errorHeading: 'Please correct this:',
  reset: {
    title: 'Choose a new password',
    intro: 'Every signed-in session will be ended. Two-factor authentication stays as it is.',
    submit: 'Change the password',
    doneTitle: 'Your password is changed',
    done: 'Sign in with your new password.',
  },
  verify: {
    title: 'Confirm your e-mail address',
    intro: 'Press the button to confirm that this address belongs to you.',
    submit: 'Confirm my address',
    doneTitle: 'Your address is confirmed',
    done: 'Thank you. You can close this page.',
  },
  invitation: {
    title: 'Create your account',
    intro: 'You are invited to join {tenant} as {role}.',
    submit: 'Create my account',
    doneTitle: 'Your account is ready',
    done: 'You are now a member of the team. Sign in with your e-mail address and password.',
  },
  deadLink: {
    title: 'This link no longer works',
    reset:
      'It was already used, replaced by a newer one, or has expired (reset links last 1 hour). Give your address to get a new link.',
    verify:
      'It was already used, replaced by a newer one, or has expired (links last 48 hours). If your address is confirmed already, there is nothing to do. Otherwise give your address to get a new confirmation mail.',
    invitation:
      'It was already used or has expired (invitations last 7 days). Ask the person who invited you to invite you again. If you already created your account, sign in.',
  },
  newLink: {
    submit: 'Send me a new link',
    sentTitle: 'Check your mail',
    sent: 'If that address has an account that needs this link, a new one is on its way. It replaces the old one.',
  },
  foreignForm: {
    title: 'This form did not come from this service',
    text: 'Nothing was changed. To go on, open the link in your mail again.',
    from: 'It was sent from {origin}, not from this service ({expected}).',
  },
  signIn: 'Sign in from the command line with: svc login',
};

const ES: PageStrings = {
  newPassword: 'Contraseña nueva',
  confirmPassword: 'Repite la contraseña nueva',
  passwordHint: `Al menos ${PASSWORD_MIN_LENGTH} caracteres.`,
  email: 'Dirección de correo',
  name: 'Tu nombre',
  nameHint: 'Opcional.',
  problems: {
    'password-too-short': `La contraseña debe tener al menos ${PASSWORD_MIN_LENGTH} caracteres.`,
    'password-too-long': 'La contraseña es demasiado larga.',
    'passwords-differ': 'Las dos contraseñas no coinciden.',
    'name-too-long': 'El nombre es demasiado largo (200 caracteres como máximo).',
    'email-taken': 'Ya existe una cuenta con esta dirección: inicia sesión o restablece su contraseña.',
    'form-expired': 'Este formulario caducó o no viene de esta página: revisa los campos y envíalo de nuevo.',
  },
  errorHeading: 'Corrige esto, por favor:',
  reset: {
    title: 'Elige una contraseña nueva',
    intro: 'Se cerrarán todas las sesiones abiertas. La verificación en dos pasos no cambia.',
    submit: 'Cambiar la contraseña',
    doneTitle: 'Tu contraseña ha cambiado',
    done: 'Inicia sesión con tu contraseña nueva.',
  },
  verify: {
    title: 'Confirma tu dirección de correo',
    intro: 'Pulsa el botón para confirmar que esta dirección es tuya.',
    submit: 'Confirmar mi dirección',
    doneTitle: 'Tu dirección está confirmada',
    done: 'Gracias. Ya puedes cerrar esta página.',
  },
  invitation: {
    title: 'Crea tu cuenta',
    intro: 'Te han invitado a unirte a {tenant} como {role}.',
    submit: 'Crear mi cuenta',
    doneTitle: 'Tu cuenta está lista',
    done: 'Ya eres miembro del equipo. Inicia sesión con tu dirección de correo y tu contraseña.',
  },
  deadLink: {
    title: 'Este enlace ya no sirve',
    reset:
      'Ya se usó, lo sustituyó otro más reciente o caducó (los enlaces de restablecimiento duran 1 hora). Escribe tu dirección para recibir un enlace nuevo.',
    verify:
      'Ya se usó, lo sustituyó otro más reciente o caducó (los enlaces duran 48 horas). Si tu dirección ya está confirmada, no hay nada que hacer. Si no, escribe tu dirección para recibir un correo de confirmación nuevo.',
    invitation:
      'Ya se usó o caducó (las invitaciones duran 7 días). Pide a quien te invitó que te invite de nuevo. Si ya creaste tu cuenta, inicia sesión.',
  },
  newLink: {
    submit: 'Enviarme un enlace nuevo',
    sentTitle: 'Mira tu correo',
    sent: 'Si esa dirección tiene una cuenta que necesita este enlace, uno nuevo va de camino. Sustituye al anterior.',
  },
  foreignForm: {
    title: 'Este formulario no viene de este servicio',
    text: 'No se ha cambiado nada. Para seguir, abre de nuevo el enlace de tu correo.',
    from: 'Se envió desde {origin}, no desde este servicio ({expected}).',
  },
  signIn: 'Inicia sesión desde la línea de órdenes con: svc login',
};

const STRINGS: Record<PageLocale, PageStrings> = { en: EN, es: ES };

export function pageStrings(locale: PageLocale): PageStrings {
  return STRINGS[locale];
}
