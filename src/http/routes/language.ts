/** POST /language: the language picker on every page (INTERFACE section 12). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { updateProfile } from '../../core/accounts/accounts.js';
import { isLocale } from '../../core/locales.js';
import { currentSignIn, setLanguageCookie, withPickedLanguage } from '../plugins/session.js';
import { safeReturnTo } from './sign-in.js';

interface LanguageForm {
  Body: { lang?: string; return_to?: string } | undefined;
  Querystring: { return_to?: string };
}

export async function languageRoutes(app: FastifyInstance): Promise<void> {
  const text = { type: 'string', maxLength: 8000 } as const;
  const schema = { body: { type: 'object', properties: { lang: text, return_to: text } }, querystring: { type: 'object', properties: { return_to: text } } };
  app.post('/language', { config: { html: true }, schema }, async (request: FastifyRequest<LanguageForm>, reply) => {
    const lang = request.body?.lang;
    if (isLocale(lang)) {
      // The cookie needs no CSRF token: another site that sets it changes nothing but words (the
      // pages' the member reads, and so the mails' of an address they give while it holds, in the
      // language of the page they gave it on: `member_emails.language`).
      setLanguageCookie(request, reply, lang);
      // A member's saved language comes before the cookie, so the picker changes it too. That is
      // a change to the account: only a form of this site makes it, which a browser's Origin
      // proves (RFC 6454 7; every browser sends it with a form's POST).
      const signIn = await currentSignIn(request);
      if (signIn && request.headers.origin === new URL(app.deps.settings.baseUrl).origin) {
        await updateProfile(app.deps.stores, app.deps.clock, signIn.user.id, { language: lang });
      }
    }
    const back = safeReturnTo(request.body?.return_to ?? request.query.return_to);
    // Back to the page, in the language picked even where the page carries one of its own.
    return reply.header('cache-control', 'no-store').redirect(isLocale(lang) ? withPickedLanguage(back, lang) : back, 303);
  });
}
