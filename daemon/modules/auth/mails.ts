// Texts of the account mails (password reset, address verification) in each supported language,
// picked from the request's Accept-Language. Links are built from PUBLIC_URL, never from Host.
export const MAIL_LOCALES = ['en', 'es'] as const;
export type MailLocale = (typeof MAIL_LOCALES)[number];

/** The best supported language of an Accept-Language header (RFC 9110 q-values), English by default. */
export function pickMailLocale(acceptLanguage: string | undefined | null): MailLocale {
  if (!acceptLanguage) return 'en';
  const ranked = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
      return { lang: tag.trim().toLowerCase().split('-')[0], q: q ? Number(q[1]) : 1, index };
    })
    .filter((entry) => entry.lang && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const entry of ranked) {
    if ((MAIL_LOCALES as readonly string[]).includes(entry.lang)) return entry.lang as MailLocale;
  }
  return 'en';
}

export interface AccountMail {
  subject: string;
  html: string;
  text: string;
  locale: MailLocale;
}

interface MailText {
  subject: string;
  intro: string;
  action: string;
  expiry: string;
  ignore: string;
}

const TEXTS: Record<'reset-password' | 'verify-email', Record<MailLocale, MailText>> = {
  'reset-password': {
    en: {
      subject: 'Reset your password',
      intro: 'Someone asked to reset the password of your account. If it was you, open this link to choose a new one:',
      action: 'Choose a new password',
      expiry: 'The link works once and expires in 1 hour.',
      ignore: 'If you did not ask for it, ignore this message: your password stays as it is.',
    },
    es: {
      subject: 'Restablece tu contraseña',
      intro:
        'Alguien ha pedido restablecer la contraseña de tu cuenta. Si fuiste tú, abre este enlace para elegir una nueva:',
      action: 'Elegir una contraseña nueva',
      expiry: 'El enlace sirve una sola vez y caduca en 1 hora.',
      ignore: 'Si no lo pediste, ignora este mensaje: tu contraseña no cambia.',
    },
  },
  'verify-email': {
    en: {
      subject: 'Confirm your e-mail address',
      intro: 'Confirm that this address belongs to you by opening this link:',
      action: 'Confirm my address',
      expiry: 'The link works once and expires in 48 hours.',
      ignore: 'If you did not create an account, ignore this message.',
    },
    es: {
      subject: 'Confirma tu dirección de correo',
      intro: 'Confirma que esta dirección es tuya abriendo este enlace:',
      action: 'Confirmar mi dirección',
      expiry: 'El enlace sirve una sola vez y caduca en 48 horas.',
      ignore: 'Si no creaste una cuenta, ignora este mensaje.',
    },
  },
};

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * `${publicUrl}/<path>?token=…&lang=…`; the token is base64url, so it needs no escaping in a URL. The
 * page behind the link speaks the language the mail was written in.
 */
export function accountLink(
  publicUrl: string,
  path: 'reset-password' | 'verify-email',
  token: string,
  locale: MailLocale,
): string {
  const url = new URL(`${publicUrl.replace(/\/+$/, '')}/${path}`);
  url.searchParams.set('token', token);
  url.searchParams.set('lang', locale);
  return url.toString();
}

export function composeAccountMail(
  kind: 'reset-password' | 'verify-email',
  locale: MailLocale,
  link: string,
): AccountMail {
  const t = TEXTS[kind][locale];
  const text = `${t.intro}\n\n${link}\n\n${t.expiry}\n${t.ignore}\n`;
  const html =
    `<!doctype html><html lang="${locale}"><body>` +
    `<p>${escapeHtml(t.intro)}</p>` +
    `<p><a href="${escapeHtml(link)}">${escapeHtml(t.action)}</a></p>` +
    `<p style="color:#555">${escapeHtml(link)}</p>` +
    `<p>${escapeHtml(t.expiry)}<br>${escapeHtml(t.ignore)}</p>` +
    `</body></html>`;
  return { subject: t.subject, html, text, locale };
}
