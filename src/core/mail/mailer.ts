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
  /** The message's values; those named `link` or `…Link` are the site's own addresses, the only ones made links. */
  values?: Record<string, string | number>;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The HTML alternative of a plain-text mail in `locale`: the text escaped, its paragraphs kept, and
 * `links` (this site's own addresses the mail carries) made links. Nothing else is linked, however
 * much it looks like an address: a member's nickname or an app's name must never become a link in
 * a mail from the site. Its language is named, so a screen reader reads it in the right voice.
 */
export function htmlOfText(text: string, links: readonly string[], locale: Locale): string {
  const anchors = new Map(links.map((link) => [escape(link), `<a href="${escape(link)}">${escape(link)}</a>`]));
  const pattern = anchors.size === 0 ? undefined : new RegExp([...anchors.keys()].map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  const paragraphs = text.trim().split(/\n{2,}/).map((paragraph) => {
    const escaped = escape(paragraph);
    const linked = pattern ? escaped.replace(pattern, (link) => anchors.get(link)!) : escaped;
    return `<p>${linked.replace(/\n/g, '<br>\n')}</p>`;
  });
  return `<!doctype html>\n<html lang="${locale}"><body style="font-family: -apple-system, 'Segoe UI', 'PingFang SC', 'Microsoft YaHei', 'Noto Sans CJK SC', sans-serif; line-height: 1.5">\n${paragraphs.join('\n')}\n</body></html>\n`;
}

export class Mailer {
  /** `enabled`: the site sends mail (SMTP_URL, or files on a developer's machine); `translate`: its words, which name the site. */
  constructor(readonly enabled: boolean, private readonly translate: (locale: Locale) => Translator) {}

  /** The catalogs' words in `locale`, for a value that is itself to be read in the mail's language. */
  words(locale: Locale): Translator {
    return this.translate(locale);
  }

  /** The message, rendered in `mail.locale`. */
  render(mail: MailToSend): MailMessage {
    const t = this.translate(mail.locale);
    const text = `${t.text(`mail.${mail.name}Body`, mail.values)}\n\n-- \n${t.text('mail.footer')}\n`;
    const links = Object.entries(mail.values ?? {}).filter(([name, value]) => (name === 'link' || name.endsWith('Link')) && typeof value === 'string').map(([, value]) => String(value));
    return { to: mail.to, subject: t.text(`mail.${mail.name}Subject`, mail.values), text, html: htmlOfText(text, links, mail.locale), language: mail.locale };
  }

  /**
   * Renders and queues the mail; nothing when the site sends no mail, or when the mail is a
   * member's and `to` is no longer their address (`MailOutboxStore.enqueue`). Whether it was queued.
   */
  async send(stores: { mailOutbox: MailOutboxStore }, mail: MailToSend, now: Instant): Promise<boolean> {
    if (!this.enabled) return false;
    return stores.mailOutbox.enqueue({ ...this.render(mail), userId: mail.userId, kind: mail.name }, now);
  }
}
