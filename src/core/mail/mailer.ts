/**
 * Mails a person reads (INTERFACE section 12): rendered in their language from the catalogs
 * (`resources/locales/<locale>/mail.json`: `<name>Subject`, `<name>Body`, and the footer every mail
 * ends with), then queued in the outbox, in the caller's transaction when it passes one.
 */
import type { Locale, Translator } from '../locales.js';
import type { Instant } from '../time.js';
import type { MailMessage, MailOutboxStore } from './ports.js';

export interface MailToSend {
  to: string;
  userId: number | null;
  locale: Locale;
  /** The message's name in `mail.json`. */
  name: string;
  values?: Record<string, string | number>;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * The HTML alternative of a plain-text mail: the text escaped, its paragraphs kept, and each of
 * this site's links made a link (a mail program does as much with plain text; some need it shown).
 */
export function htmlOfText(text: string): string {
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
  const paragraphs = text.trim().split(/\n{2,}/).map((paragraph) => {
    const linked = escape(paragraph).replace(/https?:\/\/[^\s<]+/g, (url) => `<a href="${url}">${url}</a>`);
    return `<p>${linked.replace(/\n/g, '<br>\n')}</p>`;
  });
  return `<!doctype html>\n<html><body style="font-family: -apple-system, 'Segoe UI', 'PingFang SC', 'Microsoft YaHei', 'Noto Sans CJK SC', sans-serif; line-height: 1.5">\n${paragraphs.join('\n')}\n</body></html>\n`;
}

export class Mailer {
  /** `enabled`: the site sends mail (SMTP_URL, or files on a developer's machine). */
  constructor(readonly enabled: boolean, private readonly translate: (locale: Locale) => Translator, private readonly siteName: (t: Translator) => string) {}

  /** The message, rendered in `mail.locale`. */
  render(mail: MailToSend): MailMessage {
    const t = this.translate(mail.locale);
    const values = { site: this.siteName(t), ...mail.values };
    const text = `${t.text(`mail.${mail.name}Body`, values)}\n\n-- \n${t.text('mail.footer', values)}\n`;
    return { to: mail.to, subject: t.text(`mail.${mail.name}Subject`, values), text, html: htmlOfText(text) };
  }

  /** Renders and queues the mail; nothing when the site sends no mail. Whether it was queued. */
  async send(stores: { mailOutbox: MailOutboxStore }, mail: MailToSend, now: Instant): Promise<boolean> {
    if (!this.enabled) return false;
    await stores.mailOutbox.enqueue({ ...this.render(mail), userId: mail.userId, kind: mail.name }, now);
    return true;
  }
}
