/** Text people type and we store: trimmed, within its length, and free of control characters. */
import { InputError } from './errors.js';
import { BoundedMemo } from './bounded-memo.js';

/**
 * Bidirectional embeddings, overrides and isolates reorder what a reader sees ("Trojan Source",
 * CVE-2021-42574): no stored line holds them.
 */
const BIDI_CONTROLS = '\u202a-\u202e\u2066-\u2069';
/**
 * Characters that show nothing or steer the text rather than write it: controls (C0, DEL, C1),
 * format characters (zero-width spaces and joiners, direction marks, tags, soft hyphens…), line
 * and paragraph separators, every default-ignorable code point (variation selectors, Hangul
 * fillers…), and the noncharacters (U+FFFF, U+FDD0…: Unicode keeps them for a program's own use,
 * never for text it exchanges, and a font draws none). Two names that look the same can differ by them, so a `name` (an application's or a
 * category's, shown to people deciding whom to trust) holds none.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]/u;
/**
 * The invisible characters that build an emoji (UTS #51 section 2) rather than hide a difference: a
 * variation selector 15 or 16 after an emoji (❤️) or between a keycap's base and its keycap (1️⃣), and a
 * zero-width joiner between two emoji, after a skin tone or VS16 (👨‍👩‍👧, 👩🏽‍💻, 🏳️‍🌈). A `name` may hold
 * them there; elsewhere they are `INVISIBLE` ("Pay\u200dpal").
 */
const EMOJI_PARTS = /(?<=\p{Extended_Pictographic})[\ufe0e\ufe0f]|(?<=[#*0-9])\ufe0f(?=\u20e3)|(?<=\p{Extended_Pictographic}[\u{1f3fb}-\u{1f3ff}\ufe0f]?)\u200d(?=\p{Extended_Pictographic})/gu;
const INVISIBLE_OR_BACKSLASH = new RegExp(`\\\\|${INVISIBLE.source}`, 'gu');

/**
 * `text` for a terminal or a log line: each character that shows nothing or steers the text
 * (`INVISIBLE`: an escape sequence's ESC, a newline that would forge a line of its own, a direction
 * override) written as `\u{…}`, and a backslash as `\\` so that one typed as such reads as
 * typed, so what a refusal quotes of a value cannot act on the terminal or the words around it.
 * The characters that build an emoji (`EMOJI_PARTS`: 👨‍👩‍👧, ❤️) stay as they are.
 */
export function withInvisibleEscaped(text: string): string {
  const emojiParts = new Set<number>();
  for (const part of text.matchAll(EMOJI_PARTS)) emojiParts.add(part.index);
  return text.replace(INVISIBLE_OR_BACKSLASH, (character, at: number) => {
    if (character === '\\') return '\\\\';
    return emojiParts.has(at) ? character : `\\u{${character.codePointAt(0)!.toString(16)}}`;
  });
}

/**
 * `text` as one line written to a terminal or a journal (a refusal, a failed start):
 * `withInvisibleEscaped`, so nothing in it starts another line or acts on the terminal, then a
 * newline. Every boundary that writes such a line writes it so, once.
 */
export function terminalLine(text: string): string {
  return `${withInvisibleEscaped(text)}\n`;
}

/** The characters of a value a refusal quotes whole; past them, the rest is counted, not shown. */
const QUOTED_MAX = 200;

/**
 * `value` as a refusal quotes it: in double quotes, a quote in it doubled (as SQL and CSV quote),
 * so it reads as one value; one longer than `QUOTED_MAX` characters is cut there and its length
 * said, so a line stays a line. Its invisible characters are escaped where the line is written
 * out (`terminalLine`), which writes a backslash as two: an escape made here would be shown twice.
 */
export function quoted(value: string): string {
  const shown = firstCharacters(value, QUOTED_MAX);
  const cut = shown.length < value.length ? `… (${[...value].length} characters)` : '';
  return `"${shown.replaceAll('"', '""')}"${cut}`;
}

/**
 * Combining marks drawn on one character, nonspacing and enclosing (the spacing marks of Indic
 * scripts take room of their own and stack on nothing), at most, in a `name`, a `paragraph` (an
 * app's name and description both stand above the consent page's buttons) and a nickname: the
 * languages that stack them use few (Vietnamese 2, Thai 3, Hebrew pointing and cantillation 3,
 * Tibetan's subjoined letters and vowels 4: ཧྨྱཱཾ), while a run stacked past them ("Zalgo" text)
 * draws over the words and buttons around it (Unicode's Stream-Safe Text Format, UAX #15 section
 * 13, stops at 30, which still spills over a consent page's buttons).
 */
const MAX_MARKS = 4;
/**
 * More than `MAX_MARKS` marks on one character, counted across the invisible characters a
 * description or a reason may hold among them (a zero-width joiner, a word joiner, a tag, a Hangul
 * filler), which draw nothing and leave the marks after them on the same letter. The invisible
 * ones are those that are not marks themselves (a variation selector is both), so each character
 * is read one way and the search stays linear.
 */
const MARK_RUN = new RegExp(`[\\p{Mn}\\p{Me}](?:[\\p{Default_Ignorable_Code_Point}--[\\p{Mn}\\p{Me}]]*[\\p{Mn}\\p{Me}]){${MAX_MARKS}}`, 'v');

/** Refuses, as a problem of `field`, more than `MAX_MARKS` combining marks on one character. */
export function checkMarks(field: string, text: string): void {
  if (MARK_RUN.test(text)) throw InputError.worded(field, `${field} must have at most ${MAX_MARKS} combining marks on one character`, { key: 'problems.textMarks', values: { max: MAX_MARKS } });
}
/**
 * Something a reader sees: a character that is not blank, invisible or a lone combining mark
 * (U+2800 is a blank Braille cell, U+1D159 a null notehead: symbols that draw nothing).
 */
const VISIBLE = /[^\s\p{C}\p{M}\p{Default_Ignorable_Code_Point}\u2800\u{1d159}]/u;

/**
 * The first `max` characters of `value`, counted as code points: a cut never leaves half of a
 * surrogate pair (an emoji, a rare Han character), which a page would show as U+FFFD. Only the
 * characters kept are looked at, so a long value costs no more than a short one.
 */
export function firstCharacters(value: string, max: number): string {
  let end = 0;
  let count = 0;
  for (const character of value) {
    if (count === max) break;
    end += character.length;
    count += 1;
  }
  return value.slice(0, end);
}

/** Whether `value` holds at least one character a reader sees. */
export function hasVisibleCharacter(value: string): boolean {
  return VISIBLE.test(value);
}

/**
 * The most UTF-16 units a trimmed value can hold and still be at most `maxLength` characters once
 * NFC or NFKC (Unicode UAX #15) reads it: normalising deletes no character and composes at most 4
 * into one (U+1F82's canonical decomposition, the longest), and a character takes at most 2 units.
 * A longer value is refused before it is normalised: canonical reordering takes time growing with
 * the square of a run of combining marks (a 64 KB form field of them held the server 0.6 s).
 */
export function unitsBeforeNormalizing(maxLength: number): number {
  return 2 * 4 * maxLength;
}

/**
 * Control characters stored text may not hold: PostgreSQL text cannot hold NUL at all, and the
 * others have no place in what people write: the C1 ones (U+0080–U+009F) as much as the C0 ones,
 * U+0085 a line break and U+009B a terminal's control sequence introducer, which the refusal's
 * words ("Remove the control characters.") name as well. A `line` (a title, a bio) holds no tab,
 * line break or bidirectional control either; a `text` (a body, a comment) may hold tabs and line
 * breaks; a `paragraph` (an application's description, shown where people decide whether to trust
 * it) may hold them too, but no bidirectional control; a `name` holds no invisible character
 * (`INVISIBLE`) but those that build an emoji (`EMOJI_PARTS`), and at least one letter or digit.
 */
const TEXT_CONTROLS = '\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f';
const CONTROLS = {
  text: new RegExp(`[${TEXT_CONTROLS}]`),
  paragraph: new RegExp(`[${TEXT_CONTROLS}${BIDI_CONTROLS}]`),
  line: new RegExp(`[${TEXT_CONTROLS}\\t\\n\\r${BIDI_CONTROLS}]`),
  name: { test: (text: string) => INVISIBLE.test(text.replace(EMOJI_PARTS, '')) },
} as const;

export interface TextRule {
  kind: keyof typeof CONTROLS;
  max: number;
  /** 0 for a field that may be left empty; 1 otherwise. */
  min?: 0 | 1;
}

/** `value` trimmed, or an InputError for `field` when it breaks `rule`. */
export function checkedText(field: string, value: string, rule: TextRule): string {
  // A name and a paragraph (an app's description) are shown where people decide whom to trust: a
  // lone surrogate (not a USVString, as WebIDL calls well-formed text) would show as U+FFFD, a
  // character its sender did not write.
  if ((rule.kind === 'name' || rule.kind === 'paragraph') && !value.isWellFormed()) {
    throw InputError.worded(field, `${field} must be well-formed Unicode: it holds half of a surrogate pair`, { key: 'problems.textNotWellFormed' });
  }
  // Each half of a surrogate pair alone becomes U+FFFD, as UTF-8 has it and a browser form sends
  // it: PostgreSQL stored one U+FFFD for it and SQLite three, so a title from a JSON body read
  // differently on the two databases.
  const text = value.trim().toWellFormed();
  const min = rule.min ?? 1;
  if (text.length < min || text.length > rule.max) {
    throw InputError.worded(field, min === 0 ? `${field} must be at most ${rule.max} characters` : `${field} must be 1 to ${rule.max} characters`,
      { key: min === 0 ? 'problems.textTooLong' : 'problems.textLength', values: { max: rule.max } });
  }
  if (CONTROLS[rule.kind].test(text)) {
    // Told what its kind refuses: only a `name` refuses invisible characters (and direction marks
    // with them); a title, a token's name or a body keeps them, so its words do not name them.
    if (rule.kind === 'name') throw InputError.worded(field, `${field} must not contain control characters, direction marks or invisible characters`, { key: 'problems.textControls' });
    throw InputError.worded(field, `${field} must not contain control characters${rule.kind === 'text' ? '' : ' or direction overrides'}`, { key: 'problems.textControlsOnly' });
  }
  if (rule.kind === 'name' || rule.kind === 'paragraph') checkMarks(field, text);
  if (rule.kind === 'name' && !/[\p{L}\p{N}]/u.test(text)) throw InputError.worded(field, `${field} must contain a letter or a digit`, { key: 'problems.textLetterOrDigit' });
  // A required field that draws nothing (a zero-width space, a Hangul filler, a blank Braille
  // cell) would be an empty title or comment on every page that shows it.
  if (min === 1 && !hasVisibleCharacter(text)) throw InputError.worded(field, `${field} must have a character a reader can see`, { key: 'problems.textInvisible' });
  return text;
}

/**
 * Alphabets whose letters pass for one another's (Latin a and Cyrillic а, Greek Ρ and Latin P:
 * Unicode TS #39's usual confusables), told apart when a word mixes two of them without Latin.
 */
const LOOK_ALIKE_ALPHABETS = ['Cyrillic', 'Greek', 'Armenian', 'Cherokee', 'Georgian', 'Coptic', 'Lisu', 'Canadian_Aboriginal']
  .map((script) => new RegExp(`\\p{Script=${script}}`, 'u'));
const LATIN = /\p{Script=Latin}/u;
/**
 * A character of the scripts Chinese, Japanese and Korean are written in (ideographs, kana, Hangul,
 * Bopomofo), which mix with Latin as a matter of course ("读书App") and take no spacing from it,
 * and the prolonged sound mark (ー, half-width ｰ), a letter of katakana words ("サポート") that
 * Unicode gives no script of its own, so that it is not read as punctuation parting them.
 */
export const EAST_ASIAN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}\u30fc\uff70]/u;
/** Characters no one script owns (µ, ª) or that take their neighbour's (combining marks). */
const SHARED = /[\p{Script=Common}\p{Script=Inherited}]/u;
/**
 * The Phonetic Extensions and their Supplement (U+1D00–U+1DBF): small capitals (ᴘ, ᴀ), turned and
 * hooked letters that write speech in phonetic transcription and no language's words, so a name
 * that holds one is styled. Unicode TS #39 leaves the small capitals unmapped (a capital drawn at
 * the height of a small letter is not the same glyph), yet "ᴘᴀʏᴘᴀʟ" reads as PAYPAL.
 */
const PHONETIC = /[\u1d00-\u1dbf]/u;
/** Digits in full width (U+FF10–U+FF19), which Chinese and Japanese input writes among ideographs ("第１课"). */
const FULL_WIDTH_DIGIT = /[\uff10-\uff19]/u;

/**
 * What the look-alike check reads with: the Unicode confusables data (`unhomoglyph`) and OpenCC's
 * table of Traditional characters as Simplified ones (社區 reads as 社区).
 */
interface LookAlikeTables {
  prototypes: (text: string) => string;
  simplified: (text: string) => string;
}

/**
 * The skeleton of `text` (Unicode TS #39 section 4): NFD, each character replaced by its
 * prototype from the confusables data, NFD again. Two strings that look alike have one skeleton
 * ("Рауреу" and "Paypey"); a skeleton is for comparing, not for reading (m becomes rn).
 */
function skeleton(text: string, tables: LookAlikeTables): string {
  return tables.prototypes(text.normalize('NFD')).normalize('NFD');
}

/** What may make a name pass for another, for staff who vouch for it: mixed alphabets, a name in another alphabet that reads as Latin, styled letters, the site's own name. */
export type LookAlikeSign = 'mixed_alphabets' | 'reads_as_latin' | 'styled_letters' | 'site_name';

/** Which of Latin (0) and the look-alike alphabets (1…) writes `letter`; -1 for none of them (Han, digits, symbols). */
function alphabetOf(letter: string): number {
  return [LATIN, ...LOOK_ALIKE_ALPHABETS].findIndex((alphabet) => alphabet.test(letter));
}

/** Whether one word's letters come from a script of their own beside Latin, or from two look-alike alphabets. */
function mixesAlphabets(word: string): boolean {
  const letters = [...word].filter((c) => /\p{L}/u.test(c) && !EAST_ASIAN.test(c));
  if (letters.some((c) => LATIN.test(c)) && letters.some((c) => !LATIN.test(c) && !SHARED.test(c))) return true;
  return new Set(letters.map((c) => LOOK_ALIKE_ALPHABETS.findIndex((alphabet) => alphabet.test(c))).filter((i) => i >= 0)).size > 1;
}

/**
 * Whether the name's words in a look-alike alphabet are all in one of them, hold no Latin letter
 * (that is `mixesAlphabets`'s sign) and read, skeleton by skeleton, as plain Latin letters
 * ("Рауреу" reads as Paypey): a whole name spelt so passes for a Latin one without mixing
 * anything. "Яндекс Maps" does not read so (Я, н, д), and neither does "Ελληνικά".
 */
function readsAsLatin(words: readonly string[], tables: LookAlikeTables): boolean {
  const foreign = words.filter((word) => [...word].some((c) => alphabetOf(c) > 0));
  const alphabets = new Set(foreign.flatMap((word) => [...word].map(alphabetOf).filter((i) => i > 0)));
  return foreign.length > 0 && alphabets.size === 1
    && foreign.every((word) => !LATIN.test(word) && /^[A-Za-z]+$/.test(skeleton(word, tables)));
}

/**
 * Whether the character at `index` of `characters` stands in for a plain letter or digit:
 * - a compatibility form NFKC folds into a letter or digit (full-width ＣＯＭ, bold 𝐏, circled Ⓟ,
 *   Roman numeral Ⅽ, long ſ), except full-width digits touching an East Asian character, the
 *   digits Chinese and Japanese input types there ("第１课"), and a form whose fold reads as a
 *   letter of none of the alphabets the name's plain letters are in: the micro sign is a Greek μ
 *   by another code point, which no reader of "µTorrent" takes for a Latin letter;
 * - a Latin letter that is neither ASCII nor a plain letter with marks (é, ñ are spelling) but a
 *   phonetic one (`PHONETIC`) or one whose skeleton is a single plain letter (the IPA ɡ and ɑ,
 *   dotless ı, ꜱ: Turkish names pay for ı with a false alarm).
 */
function standsInForPlain(characters: readonly string[], index: number, plainAlphabets: ReadonlySet<number>, tables: LookAlikeTables): boolean {
  const c = characters[index]!;
  const fold = c.normalize('NFKC');
  if (fold !== c) {
    if (!/[\p{L}\p{N}]/u.test(fold)) return false;
    if (FULL_WIDTH_DIGIT.test(c) && touchesEastAsian(characters, index)) return false;
    const foldAlphabets = [...skeleton(fold, tables)].map(alphabetOf).filter((i) => i >= 0);
    return plainAlphabets.size === 0 || foldAlphabets.length === 0 || foldAlphabets.some((i) => plainAlphabets.has(i));
  }
  if (!LATIN.test(c) || !/\p{L}/u.test(c) || /^[\x00-\x7f]/.test(c.normalize('NFD'))) return false;
  return PHONETIC.test(c) || /^[A-Za-z]$/.test(skeleton(c, tables));
}

/** Whether the run of full-width digits around `index` has an East Asian character at either end. */
function touchesEastAsian(characters: readonly string[], index: number): boolean {
  let before = index - 1;
  while (before >= 0 && FULL_WIDTH_DIGIT.test(characters[before]!)) before -= 1;
  let after = index + 1;
  while (after < characters.length && FULL_WIDTH_DIGIT.test(characters[after]!)) after += 1;
  return EAST_ASIAN.test(characters[before] ?? '') || EAST_ASIAN.test(characters[after] ?? '');
}

/**
 * Chinese words that, after the site's name, claim its accounts or its authority whatever follows
 * them, as a phishing page names itself (社区账号找回, 社区登录助手, 社区会员中心): acts that hand over
 * who one is or what one has, which a page doing them in the site's name asks for whatever it
 * calls itself after. Official (site, account: 官号, 官博, 官微), verified, sign-in (登陆 as it is
 * often misspelt), sign-up, authorization, recovering and resetting (找回密码, 重置密码, Taiwan's
 * 重設), real-name and identity checks, customer service, the client, and what a phishing page asks
 * for or hands out (attack92: verification, pass, payment, wallet, password, red envelopes,
 * membership, top-ups (Taiwan's 儲值), withdrawals, refunds, a lottery). Simplified only: names are
 * read through `simplified` first, which turns Traditional characters into Simplified ones but not
 * Taiwan's words into the mainland's, so both are listed.
 */
const SITE_ACCESS_WORDS_CHINESE = [
  '官方', '官网', '官号', '官博', '官微', '认证', '验证', '登录', '登陆', '登入', '注册', '授权',
  '找回', '重置', '重设', '实名', '身份', '客服', '客户端', '通行证', '支付',
  '钱包', '密码', '红包', '会员', '充值', '储值', '提现', '退款', '抽奖',
];
/**
 * Chinese words of what the site holds for its members and of those who run it: accounts, the back
 * office and site affairs, moderators, administrators, staff, the webmaster (站长, Taiwan's 網管) and
 * editors. A tool of someone else's may work on them (社区账号导出工具, an account exporter;
 * 社区管理员工具, tools for its administrators), so they claim as the name's last words, before a
 * word of access, or before a word of the site's service, with which they name its own (社区账号安全,
 * 社区管理员中心), as `SITE_HOLDING_WORDS_LATIN` do.
 */
const SITE_HOLDING_WORDS_CHINESE = ['账号', '帐号', '账户', '帐户', '后台', '站务', '版主', '管理员', '工作人员', '站长', '网管', '小编'];
/**
 * Chinese words of what befalls what the site holds, the lures of a page that claims to act on an
 * account (您的账号异常): frozen and unfrozen, anomalous, banned (Taiwan's 停權, 封鎖) and unbanned,
 * locked and unlocked, activated, disabled, closed, protected, settings (Taiwan's 設定), confirmed,
 * warned, in violation, restricted, expired, restored, upgraded, migrated, reviewed. After a word of what it
 * holds they claim as a word of its service does (社区账号冻结, 社区账号异常); alone they are
 * ordinary (社区保护伞), as `SITE_STATE_WORDS_LATIN` are.
 */
const SITE_STATE_WORDS_CHINESE = [
  '冻结', '解冻', '异常', '封禁', '封号', '封锁', '停权', '解封', '锁定', '解锁', '激活', '停用', '禁用', '注销', '保护', '设置', '设定', '确认', '警告',
  '违规', '限制', '受限', '过期', '到期', '恢复', '升级', '迁移', '审核',
];
/**
 * Chinese words that claim to be the site's own service when they are what the name names, its
 * last words (社区安全中心, 社区客服中心), yet begin or end an ordinary compound after a community's
 * name: team (社区团队建设, team building), administration, groups, operations, security, checks,
 * centre (社区中心预约, booking at a community centre), service (社区服务站, a service station),
 * help, support (社区支持者, a supporter), hotlines, notices (社区公告板, a notice board), messages,
 * the system, its console and panels (控制台, 面板), appeals, reports, feedback, oversight, working
 * groups, editors, perks (社区福利院, a welfare home), points, coins, rewards and claiming them, a
 * mall, editions (online, 新版, 手机版, 网页版, 小程序), what a company calls itself (公司, 集团, 总部),
 * and what a site does (社区, 社群, 论坛, 网, 网站, 平台), as a site an operator named 河畔
 * calls itself 河畔社区 or 河畔网, where 河畔社区团购 is group buying and 河畔网球 tennis. The ways
 * one signs in or reaches service (扫码, 一键, 在线, 人工) and changing or forgetting (修改, Taiwan's
 * 變更, 忘记) are among them, so that 社区扫码登录 and 社区忘记密码 claim as 社区登录 and 社区密码 do;
 * Taiwan's words for hotlines (專線), messages (訊息), points (點數), apps (應用程式) and editions
 * (行動版, 桌面版) too.
 */
const SITE_SERVICE_WORDS_CHINESE = [
  '团队', '管理', '组', '运营', '安全', '检测', '检查', '中心', '服务', '帮助', '支持', '支援', '热线', '通知', '公告', '消息', '系统', '申诉',
  '举报', '意见', '反馈', '监管', '工作组', '编辑部', '福利', '积分', '金币', '奖励', '兑换', '领取', '商城', '在线', '线上', '人工', '新版', '手机版',
  '网页版', '电脑版', '行动版', '桌面版', '小程序', '应用', '应用程式', '扫码', '一键', '快捷', '统一', '单点', '修改', '变更', '忘记', '专线', '讯息', '点数',
  '控制台', '面板', '公司', '有限公司', '集团', '总部', '社区', '社群', '论坛', '网', '网站', '平台',
];
/**
 * Words that, before a Chinese site's name, sign in or up to it or welcome one there, making it
 * the name as much as if it led ("登录河畔", "欢迎来到河畔", "请登录社区"), and 到 (to) after them
 * ("登录到社区", sign in to, as English "Sign into Community").
 */
const LEAD_INS_CHINESE = ['欢迎', '请', '来到', '进入', '登录', '登陆', '登入', '注册', '授权', '到'];
/**
 * Japanese words that after a site's name in an alphabet or in katakana claim as the Chinese words
 * do ("My Communityアカウント", "Communityのログイン"), kanji as `simplified` reads them (認証 as
 * 认证, already a Chinese word of access): sign-in and sign-up, passwords and passkeys; accounts,
 * administrators and staff; support, help, security, centre and service; suspended, locked and
 * restricted (凍結 and 確認 read as the Chinese 冻结 and 确认). After a Han site name katakana ends
 * the name whatever it says (`hanNameEnds`).
 */
const SITE_ACCESS_WORDS_JAPANESE = ['ログイン', 'ログオン', 'サインイン', 'サインアップ', 'パスワード', 'パスキー', '二段阶认证'];
const SITE_HOLDING_WORDS_JAPANESE = ['アカウント', '管理者', 'スタッフ', 'モデレーター'];
const SITE_SERVICE_WORDS_JAPANESE = ['サポート', 'ヘルプ', 'セキュリティ', 'センター', 'サービス'];
const SITE_STATE_WORDS_JAPANESE = ['停止', '一时停止', 'ロック', '制限'];
/**
 * Japanese particles that join the site's name to a claim as English connectors do: に and へ
 * (to: "Communityにログイン", sign in to Community) and で (with: "Communityでログイン", the
 * button "Sign in with Community"); and が and は, which tell what befell what it holds as English
 * "is" does ("Communityアカウントが停止されました", your Community account is suspended).
 */
const CONNECTORS_JAPANESE = ['に', 'へ', 'で'];
const STATE_LINKS_JAPANESE = ['が', 'は'];
/**
 * The possessives that may stand between the site's name and a claim: Chinese 的 ("社区的账号",
 * "社区的官方") and Japanese の ("Communityのアカウント").
 */
const POSSESSIVES = ['的', 'の'];
/**
 * English words that, beside the site's name, claim its accounts or its authority whatever follows
 * them ("Community Login Helper", "Community Refund Desk"): acts that hand over who one is or what
 * one has, which a page doing them in the site's name asks for whatever it calls itself after.
 * Official, sign-in and sign-up however spelt ("sign into" and "log into" as people write "sign in
 * to"), authorization, verification, two-factor sign-in, one-time codes, passwords and passkeys,
 * payment and refunds, and what a phishing page hands out (rewards, a giveaway, a premium
 * membership). Each claims in the plural too ("Community Logins").
 */
const SITE_ACCESS_WORDS_LATIN = [
  'official', 'login', 'logon', 'log in', 'log on', 'log into', 'log onto', 'signin', 'sign in', 'sign into', 'sign onto', 'signon', 'sign on',
  'signup', 'sign up', 'register', 'registration', 'auth', 'oauth', 'sso', 'authentication', 'authorization', 'authorisation',
  'authenticator', 'verify', 'verified', 'verification', '2fa', 'mfa', 'two factor', '2 factor', 'two step', '2 step', 'otp', 'totp',
  'password', 'passcode', 'passkey', 'passport',
  'wallet', 'payment', 'billing', 'refund', 'checkout', 'invoice', 'reward', 'giveaway', 'premium', 'vip', 'membership',
];
/**
 * English words of what the site holds for its members and of those who run it: accounts, IDs,
 * admins, administrators and administration, staff, moderators. A tool of someone else's may work
 * on them ("Community Account Exporter", "Community Admin Tools", "Community Staff Picks"), so
 * they claim as the name's last words ("Community Account"), before a word of access ("Community
 * Account Login") or before a word of the site's service, with which they name its own whatever
 * follows ("Community Account Security Checker", "Community Admin Panel"). Each claims in the
 * plural too ("Community IDs").
 */
const SITE_HOLDING_WORDS_LATIN = ['account', 'id', 'admin', 'administrator', 'administration', 'staff', 'moderator'];
/**
 * English words of what befalls what the site holds, the lures of a page that claims to act on an
 * account ("Your account is suspended"): suspended, locked or blocked and their undoing, banned,
 * disabled, (re)activated, frozen, restricted or limited, compromised, suspicious or unusual,
 * expired, closed, deleted or terminated, a warning or violation, confirming, validating,
 * protecting, restoring or reviewing it, its settings and its manager. After a word of what it
 * holds they claim as a word of its service does ("Community Account Suspended", "Community
 * Account Settings"); alone they are ordinary ("Community Protection Fund", "Community Manager
 * Toolkit"), so they claim neither before the site's name nor by ending the name after it.
 */
const SITE_STATE_WORDS_LATIN = [
  'suspended', 'suspension', 'locked', 'lockout', 'unlock', 'blocked', 'unblock', 'banned', 'unban', 'disabled', 'deactivated', 'deactivation',
  'activation', 'reactivation', 'frozen', 'unfreeze', 'restricted', 'restriction', 'limited', 'limitation', 'compromised', 'suspicious', 'unusual',
  'expired', 'expiration', 'closure', 'closed', 'deletion', 'deleted', 'termination', 'terminated', 'warning', 'violation', 'confirmation',
  'confirm', 'validation', 'validate', 'protection', 'restore', 'restoration', 'review', 'settings', 'manager', 'management',
];
/**
 * English words of the site's own service, which tends what it holds: they claim when they end the
 * name after its name, alone or after another claim ("Community Support", "Community Help Center",
 * "CommunityHub"), and after a word of what it holds whatever follows ("Community Account Security
 * Checker", "Community Admin Panel Helper"), yet begin ordinary phrases after the name alone
 * ("Community Service Tracker", volunteering; "Community Center Bookings"; "Community Safety Map";
 * "Community Recovery Network"): support, help, service, security (secure), safety, trust and
 * safety, recovery, resets, identity, "Connect" (as sites name their sign-in for other sites),
 * identity providers, single (sign-on), authorizing, consent, permissions and access (what a consent
 * page asks), moderation, centre, hub, portal, help lines and support chat, appeals, abuse desks,
 * feedback, checks, codes, status, updates, upgrades and renewals, notices and announcements, keys,
 * its console, panel and dashboard. Each claims in the plural too.
 */
const SITE_SERVICE_WORDS_LATIN = [
  'support', 'help', 'helpdesk', 'help desk', 'helpline', 'hotline', 'customer care', 'live chat', 'support chat', 'service',
  'security', 'safety', 'secure', 'provider', 'status', 'upgrade', 'renewal', 'announcement', 'feedback',
  'trust safety', 'trust and safety', 'recovery', 'reset', 'identity', 'connect', 'single', 'authorize', 'consent', 'permission', 'access',
  'moderation', 'center', 'centre', 'hub', 'portal', 'appeal', 'abuse', 'check', 'checkup', 'code', 'update', 'notice',
  'notification', 'alert', 'key', 'console', 'panel', 'dashboard',
];
/**
 * English words of what the site is: its people (customers, members, developers, owners and
 * founders, team, mods), the app and its editions and platforms (mobile, desktop, web, plus, pro,
 * lite, beta, iOS, Android…), its currency and perks (pay, points, coins, prizes, gifts), what a
 * company adds to its name (Inc, Ltd, HQ, ™ as NFKC writes it: TM) and what a site calls itself
 * (community, forum, site, platform: "Riverside Community"). They claim as words of its service do
 * where they end the name ("Community App", "Community Staff Team"), but after a word of what it
 * holds they name whom or where a tool serves, not the site's own desk, and claim only there:
 * "Community Staff Member Directory" and "Community Admin Web Tools" are someone else's tools for
 * the site's staff. Each claims in the plural too.
 */
const SITE_SELF_WORDS_LATIN = [
  'customer', 'developer', 'dev', 'owner', 'founder', 'mod', 'member', 'team', 'app', 'mobile', 'client',
  'desktop', 'online', 'web', 'plus', 'pro', 'lite', 'beta', 'ios', 'android', 'windows', 'mac', 'macos', 'linux', 'pay', 'point', 'coin',
  'credit', 'cash', 'airdrop', 'prize', 'lottery', 'subscription', 'bonus', 'gift', 'perks', 'inc', 'ltd', 'llc', 'corp', 'hq', 'tm', 'sm',
  'community', 'forum', 'site', 'website', 'platform',
];
/**
 * Words that join the site's name to the claims beside it, before it ("Sign in to the Community",
 * "Login for Community", "Login onto Community", "Your Community", "Welcome to Community", "Please
 * sign in to Community", as 请 leads 请登录社区; the buttons a sign-in page sets before the site it
 * sends one to: "Continue to Community", "Continue with Community", "Go to Community", "Back to
 * Community") or after it ("Community for iOS", "Community on the Web").
 */
const CONNECTORS_LATIN = [
  'to', 'into', 'onto', 'with', 'via', 'for', 'at', 'on', 'the', 'your', 'welcome', 'please',
  'continue to', 'continue with', 'continue on', 'proceed to', 'go to', 'return to', 'back to',
];
/**
 * Verbs that tell what befell what the site holds, between it and a word of its state, as a
 * sentence of a phishing page does ("Your Community account is suspended", "Community IDs were
 * locked", "Community account has been disabled"), one after another and with the adverbs such a
 * sentence sets among them ("is now being reviewed", "has been temporarily suspended"); elsewhere
 * they join nothing.
 */
const STATE_LINKS_LATIN = [
  'is', 'are', 'was', 'were', 'has', 'have', 'had', 'will', 'got', 'be', 'being', 'been', 'now', 'temporarily', 'permanently', 'currently', 'already', 'soon', 'automatically',
];

/**
 * Latin small capitals as the letters they are drawn as, which the confusables data leaves as
 * they are ("ᴠᴇʀɪꜰɪᴇᴅ" reads as "verified").
 */
const SMALL_CAPITALS: Readonly<Record<string, string>> = Object.fromEntries(
  [...'ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ'].map((c, i) => [c, 'abcdefghijklmnopqrstuvwyz'[i]!]),
);

/** One letter or digit of a name as `site_name` reads it: folded, and where a word may begin. */
interface FoldedCharacter {
  character: string;
  /** A space, punctuation or symbol came before it, or it begins the name. */
  afterGap: boolean;
  /** A tagline mark (`TAGLINE`) came before it: what the name's own words say ends there ("Community Support (EU)"). */
  afterTagline: boolean;
  /** Written as a capital, which begins a word inside "MyCommunity". */
  capital: boolean;
  /**
   * Written as a letter outside East Asian scripts, one that may go on a word: not a digit, even
   * one whose skeleton is a letter (0 as o, 1 as l: "Community1" ends the site's name).
   */
  letter: boolean;
}

/**
 * Letters folded so far (`foldedLetter`): a skeleton runs unhomoglyph's table, one pattern of
 * thousands of alternatives, twice a letter, which made reading one app name cost 200-540 µs, and
 * names draw on few letters.
 */
const foldedLetters = new BoundedMemo<string, string>(4096);

/** The letters `lower` reads as: its skeleton's, read again as a small one, marks dropped. */
function foldedLetter(lower: string, tables: LookAlikeTables): string {
  // The skeleton of a letter may be a capital (Lisu ꓟ as M), itself read again as a small one (m as rn).
  return foldedLetters.get(lower, () => skeleton(skeleton(lower, tables).toLowerCase(), tables).replace(/\p{M}/gu, '').toLowerCase());
}

/**
 * `text` folded by NFKC, Traditional to Simplified Chinese and letter case, rid of spaces,
 * punctuation and symbols (which may part a name's letters: "社 区", "C.o.m.m.u.n.i.t.y") but
 * remembering where they were; a letter outside East Asian scripts as its skeleton without marks,
 * so that "Cornmunity" (rn for m) and a dot over or under a letter ("Commun\u0307ity") fold as
 * the site's name does (attack92).
 */
function foldedCharacters(text: string, tables: LookAlikeTables): FoldedCharacter[] {
  const folded: FoldedCharacter[] = [];
  const plain = tables.simplified(text.normalize('NFKC'));
  const taglineEnds = new Set([...plain.matchAll(new RegExp(TAGLINE, 'gu'))].map((match) => match.index + match[0].length));
  let gap = true;
  let tagline = false;
  let at = 0;
  for (const character of plain) {
    at += character.length;
    if (taglineEnds.has(at)) tagline = true;
    if (/[\p{Z}\p{P}\p{S}]/u.test(character)) {
      gap = true;
      continue;
    }
    const lower = (SMALL_CAPITALS[character] ?? character).toLowerCase();
    const capital = lower !== character;
    const parts = EAST_ASIAN.test(character) ? lower : foldedLetter(lower, tables);
    // A letter drawn as punctuation parts words as the punctuation does: the Lisu tone mark ꓸ is a
    // dot, the modifier letters ʻ ˈ ʼ are apostrophes ("Communityꓸhub" reads as "Community.hub").
    // A modifier letter left as it is (ˌ) is a mark of speech, no letter of a word either.
    if (!EAST_ASIAN.test(character) && /^[\p{Z}\p{P}\p{S}\p{Lm}]+$/u.test(parts)) {
      gap = true;
      continue;
    }
    const letter = /\p{L}/u.test(character) && !EAST_ASIAN.test(character);
    for (const part of parts) folded.push({ character: part, afterGap: gap, afterTagline: tagline, capital, letter });
    if (parts !== '') {
      gap = false;
      tagline = false;
    }
  }
  return folded;
}

/** Whether the folded characters of `name` from `start` on are `sought`'s. */
function foundAt(name: readonly FoldedCharacter[], start: number, sought: readonly string[]): boolean {
  return start + sought.length <= name.length && sought.every((character, i) => name[start + i]!.character === character);
}

/** Whether `character` is a digit: neither a letter of an alphabet nor East Asian, whatever its skeleton (0 folds as o). */
function isDigit(character: FoldedCharacter): boolean {
  return !character.letter && !EAST_ASIAN.test(character.character);
}

/** Whether a word of an alphabet may begin at `start`: after a gap, a non-letter (Han beside it: "Community官方") or a capital after small letters ("MyCommunity"). */
function beginsWord(name: readonly FoldedCharacter[], start: number): boolean {
  const previous = name[start - 1];
  return previous === undefined || name[start]!.afterGap || !previous.letter || (name[start]!.capital && !previous.capital);
}

/**
 * Whether the word of an alphabet (Latin, Cyrillic, Greek…) that begins at `start` may end at
 * `end` rather than going on as a longer word: at the name's end, a gap (space, punctuation,
 * symbol), a digit, Han, or a change of case ("Community Account", "Community-hub",
 * "Community365", "Community官方", "CommunityHub", "COMMUNITYhub"); letters that go on in the same
 * case make another word ("Communityhub", "Communities").
 */
function endsWord(name: readonly FoldedCharacter[], start: number, end: number): boolean {
  const next = name[end];
  if (next === undefined || next.afterGap || !next.letter) return true;
  const last = name[end - 1]!;
  // Case parts words as a gap would: a capital after small letters ("CommunityHub"); after a word
  // written in capitals, a small letter ("COMMUNITYhub") or a capital that begins a word of small
  // letters ("COMMUNITYSecurity", as in "XMLHttp"). "COMMUNITYHUB" is one word, and so is a
  // capital before small letters ("Support").
  if (next.capital !== last.capital) return next.capital || (end - start > 1 && name.slice(start, end).every((c) => c.capital));
  const after = name[end + 1];
  return next.capital && after !== undefined && !after.afterGap && after.letter && !after.capital;
}

/**
 * Whether `site` stands in `name` as a name of its own rather than inside a longer word, anywhere
 * in it: in an alphabet as a whole word (`beginsWord`, `endsWord`: "community tools",
 * "MyCommunity", not "Communityhub"); in Han or kana where it ends as a name (`hanNameEnds`).
 */
function standsAsName(name: readonly FoldedCharacter[], site: string): boolean {
  const sought = [...site];
  const hanEnds = hanNameEnds(name, site);
  for (let start = 0; start + sought.length <= name.length; start += 1) {
    if (!foundAt(name, start, sought)) continue;
    const end = start + sought.length;
    if (EAST_ASIAN.test(site) ? hanEnds(end) : beginsWord(name, start) && endsWord(name, start, end)) return true;
  }
  return false;
}

/**
 * How a word beside the site's name bears on it: a word of `access` claims its accounts whatever
 * follows; a word of what it `hold`s claims before a word of its service or of its `state`, which
 * claims there and nowhere else, a verb `linking` them or not ("Account is Suspended"); a word of
 * its `service`, of what it is (`self`), and a word `joining` them (a connector, a number), claim
 * where what follows does.
 */
type Bearing = 'access' | 'holding' | 'state' | 'linking' | 'service' | 'self' | 'joining';

/** A word that may follow the site's name, found at a place in a name: where it ends, and how it bears on the name. */
interface WordFound {
  end: number;
  bearing: Bearing;
}

/**
 * For each place of a name of `length` folded characters, whether its words from there on make the
 * site's name before them the site's own: they end there (`ends`), or claim its accounts (a word
 * of access, or one of what it holds before a word of its service: "Account Security"), or are
 * words of its service up to where `ends` says the name's words end. Worked out from the name's end
 * back, each place once: a name may be read several ways ("LogIn" as login and as log in,
 * "HelpDesk" as helpdesk and as help desk), and a search of every reading doubles with each such
 * word (17 of them within a name's 80 characters held the server 8 s).
 */
function claimingPlaces(length: number, ends: (at: number) => boolean, wordsAt: (at: number) => WordFound[]): boolean[] {
  const claims: boolean[] = [];
  // Whether a word of the site's state begins at a place, after verbs and adverbs or not ("is
  // temporarily suspended"), and whether one that claims after a word of what it holds does (a
  // word of its service or state, or a verb before its state).
  const toState: boolean[] = [];
  const afterHolding: boolean[] = [];
  for (let at = length; at >= 0; at -= 1) {
    const words = wordsAt(at);
    toState[at] = words.some(({ end, bearing }) => bearing === 'state' || (bearing === 'linking' && toState[end]!));
    afterHolding[at] = words.some(({ end, bearing }) => bearing === 'service' || bearing === 'state' || (bearing === 'linking' && toState[end]!));
    claims[at] = ends(at) || words.some(({ end, bearing }) =>
      bearing === 'access' || (bearing !== 'state' && bearing !== 'linking' && claims[end]!) || (bearing === 'holding' && afterHolding[end]!));
  }
  return claims;
}

/**
 * For each place of a name of `length` folded characters, whether words one after another
 * (`wordsAt`) lead to it from the name's start, each place read once; a word of what befalls what
 * the site holds leads nowhere ("Review Community" is a community for reviews), nor does a verb
 * ("Is Community Garden Open").
 */
function reachedPlaces(length: number, wordsAt: (at: number) => WordFound[]): boolean[] {
  const reached = Array.from({ length: length + 1 }, (_, at) => at === 0);
  for (let at = 0; at < length; at += 1) {
    if (reached[at]) for (const { end, bearing } of wordsAt(at)) if (bearing !== 'state' && bearing !== 'linking') reached[end] = true;
  }
  return reached;
}

/** Han, in which a Chinese site name is written: kana or Hangul after it begins a word in Japanese or Korean. */
const HAN = /\p{Script=Han}/u;
/** Han and kana, whose words after a site's name in an alphabet `hanNameEnds` reads ("My Community账号", "My Communityアカウント"). */
const HAN_OR_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * Whether a site's name, `site`, found in `name` before a place, is a name of its own there by the
 * Chinese words after it, asked of any number of places at the cost of one reading of the name.
 * Chinese and Japanese write no gaps and put what a thing is last, so it is where no more of its
 * words follow it: the name alone; a Latin letter or digit, 〇 (a digit written as Han) or, after
 * Han, kana or Hangul, a word in Japanese or Korean ("社区 App", "社区2.0", "社区〇号",
 * "社区アカウント", "社区のお知らせ", "社区계정"); words that make it the site's own service, up to
 * the end of its script (`SITE_SERVICE_WORDS_CHINESE`: "社区安全中心", "社区客服中心"); a word that
 * claims its accounts or authority, whatever follows (`SITE_ACCESS_WORDS_CHINESE`: "社区账号找回");
 * or a word of what it holds at the end, before a word of access or of its service
 * (`SITE_HOLDING_WORDS_CHINESE`: "社区账号", "社区账号安全"), 的 or の between or not. Any other word
 * makes an ordinary compound, an app for a community: 社区团购 is a kind of group buying, 社区医院 a
 * clinic, 社区服务站 a service station, 社区助手 a helper for one, 社区账号导出工具 an exporter of
 * accounts. Spaces do not part Han ("社区 团购" is 社区团购), as Chinese writes none. A site's name
 * in an alphabet is read so where Han or kana follows it, kana read by the Japanese words
 * (`SITE_HOLDING_WORDS_JAPANESE`…: "My Community账号", "My Communityアカウント").
 */
function hanNameEnds(name: readonly FoldedCharacter[], site: string): (end: number) => boolean {
  const last = [...site].at(-1)!;
  const goesOn = (c: string) => EAST_ASIAN.test(c) && !/\p{N}/u.test(c)
    && (HAN.test(last) ? HAN.test(c) : !EAST_ASIAN.test(last) || !KATAKANA.test(c) || KATAKANA.test(last));
  const ends = (at: number) => at === name.length || !goesOn(name[at]!.character) || name[at]!.afterTagline;
  const possessive = (at: number) => POSSESSIVES.some((word) => foundAt(name, at, [word])) ? at + 1 : at;
  // 的 may follow a word of what the site holds as it does its name ("社区账号的登录").
  const wordsAt = (at: number) => (EAST_ASIAN_CLAIM_WORDS.get(name[at]?.character ?? '') ?? [])
    .filter(({ words: [word] }) => foundAt(name, at, [...word!]))
    .map(({ words: [word], bearing }) => ({ end: bearing === 'holding' ? possessive(at + [...word!].length) : at + [...word!].length, bearing }));
  let claims: boolean[] | undefined;
  return (end) => {
    claims ??= claimingPlaces(name.length, ends, wordsAt);
    return claims[possessive(end)]!;
  };
}

/** A phrase that bears on the site's name beside it, its words as they are sought in a folded name. */
interface ClaimPhrase {
  words: readonly string[];
  bearing: Bearing;
}

/**
 * Claim phrases by the character they begin with, so that a place of a name is tried only against
 * those that may begin there: NFKC writes one character of a name as up to 18 ("ﷺ"), and every
 * list tried at each of them held the server a tenth of a second for 80 characters.
 */
type ClaimWordIndex = ReadonlyMap<string, readonly ClaimPhrase[]>;

function indexedClaimWords(lists: readonly (readonly [readonly (readonly string[])[], Bearing])[]): ClaimWordIndex {
  const index = new Map<string, ClaimPhrase[]>();
  for (const [list, bearing] of lists) {
    for (const words of list) {
      const first = [...words[0]!][0]!;
      index.set(first, [...(index.get(first) ?? []), { words, bearing }]);
    }
  }
  return index;
}

const EAST_ASIAN_CLAIM_WORDS = indexedClaimWords([
  [[...SITE_ACCESS_WORDS_CHINESE, ...SITE_ACCESS_WORDS_JAPANESE].map((word) => [word]), 'access'],
  [[...SITE_HOLDING_WORDS_CHINESE, ...SITE_HOLDING_WORDS_JAPANESE].map((word) => [word]), 'holding'],
  [[...SITE_STATE_WORDS_CHINESE, ...SITE_STATE_WORDS_JAPANESE].map((word) => [word]), 'state'],
  [[...SITE_SERVICE_WORDS_CHINESE, ...SITE_SERVICE_WORDS_JAPANESE].map((word) => [word]), 'service'],
  [CONNECTORS_JAPANESE.map((word) => [word]), 'joining'], [STATE_LINKS_JAPANESE.map((word) => [word]), 'linking'],
]);

/** The English claim words folded once, as the names they are sought in are (`foldedForm`, `oneStroke`), by their first character. */
function latinClaimWords(tables: LookAlikeTables): ClaimWordIndex {
  const phrases = (list: readonly string[]) => list.map((phrase) => phrase.split(' ').map((word) => oneStroke(foldedForm(word, tables))));
  return indexedClaimWords([
    [phrases(SITE_ACCESS_WORDS_LATIN), 'access'], [phrases(SITE_HOLDING_WORDS_LATIN), 'holding'], [phrases(SITE_STATE_WORDS_LATIN), 'state'],
    [phrases(SITE_SERVICE_WORDS_LATIN), 'service'], [phrases(SITE_SELF_WORDS_LATIN), 'self'], [phrases(CONNECTORS_LATIN), 'joining'],
    [phrases(STATE_LINKS_LATIN), 'linking'],
  ]);
}

/**
 * The fewest letters of a site's name in an alphabet that is read misspelt too (`misspeltEnds`).
 * In a shorter word one slip is much of it and often makes another word a name may mean: a site
 * named "Reading" would refuse "Rending", one named "Garden" "Warden Login" (its first letter
 * aside, "Gardem"); at eight letters and more, a word one inner slip away is a misspelling.
 */
const MISSPELT_FROM = 8;

/**
 * The letters beside each on a QWERTY keyboard, as typo-squatting tools mistype them (dnstwist's
 * "replacement"): a finger slips to a neighbouring key, not to any letter.
 */
const KEY_NEIGHBOURS: Readonly<Record<string, string>> = {
  q: 'wa', w: 'qeas', e: 'wrsd', r: 'etdf', t: 'ryfg', y: 'tugh', u: 'yihj', i: 'uojk', o: 'ipkl', p: 'ol',
  a: 'qwsz', s: 'weadzx', d: 'ersfxc', f: 'rtdgcv', g: 'tyfhvb', h: 'yugjbn', j: 'uihknm', k: 'iojlm', l: 'opk',
  z: 'asx', x: 'zsdc', c: 'xdfv', v: 'cfgb', b: 'vghn', n: 'bhjm', m: 'njk',
};

/**
 * Where `sought`, a site's name in an alphabet of at least `MISSPELT_FROM` letters, ends among a
 * name's `letters` when it begins at `start` misspelt by one of the four slips of typing (Damerau):
 * an inner letter left out ("Comunity"), one added ("Commmunity", "Communitiy"), one mistyped for
 * a key beside it (`KEY_NEIGHBOURS`: "Commumity"; "Communlty" reads as written, l as i) or two
 * inner letters swapped ("Commuinty"). A letter typed for one far from it on the keyboard makes
 * another word more often than a slip: a site named "Investors" keeps "Inventors Hub" apart.
 * Its first and last letters stay as written: readers take a word in by them, and a letter after
 * the last makes another word ("Riversides", "Lakesider"). A slip is read at the first letter that
 * differs, the only place one can begin (one in a run of a letter reads alike at either end of
 * it), so each place of a name costs the length of the site's name, as finding it does.
 */
function misspeltEnds(letters: readonly string[], start: number, sought: readonly string[]): number[] {
  const length = sought.length;
  let differs = 0;
  while (differs < length && letters[start + differs] === sought[differs]) differs += 1;
  const at = start + differs;
  const inner = (index: number) => differs >= 1 && index <= length - 2;
  // Whether the site's name from its letter `from` on is written from the name's letter `place` on.
  const rest = (place: number, from: number) => sought.slice(from).every((letter, i) => letters[place + i] === letter);
  const typed = letters[at] !== undefined && !EAST_ASIAN.test(letters[at]!);
  return [
    ...(inner(differs) && (KEY_NEIGHBOURS[sought[differs]!] ?? '').includes(letters[at] ?? '\0') && rest(at + 1, differs + 1) ? [start + length] : []),
    ...(inner(differs) && rest(at, differs + 1) ? [start + length - 1] : []),
    ...(inner(differs - 1) && typed && rest(at + 1, differs) ? [start + length + 1] : []),
    ...(inner(differs + 1) && letters[at] === sought[differs + 1] && letters[at + 1] === sought[differs] && rest(at + 2, differs + 2) ? [start + length] : []),
  ];
}

/**
 * Folded characters as `misspeltEnds` counts letters: rn as the one letter m it stands for (the
 * skeleton writes m so, and a slip of an m is of one letter: "Comunity"), with where each letter
 * begins among them (and, last, their end).
 */
function asLetters(characters: readonly string[]): { letters: string[]; starts: number[] } {
  const letters: string[] = [];
  const starts: number[] = [];
  for (let at = 0; at < characters.length; at += 1) {
    starts.push(at);
    const m = characters[at] === 'r' && characters[at + 1] === 'n';
    letters.push(m ? 'm' : characters[at]!);
    if (m) at += 1;
  }
  starts.push(characters.length);
  return { letters, starts };
}

/** The English claim words found in a folded name (`latinWordsIn`), with where its runs of digits end and a possessive "s" after a place. */
interface LatinWords {
  wordsAt: (at: number) => WordFound[];
  digitsEnd: readonly number[];
  possessive: (at: number) => number;
}

/** The English claim words of `words` where they stand in `name`, each a whole word or a run of digits. */
function latinWordsIn(name: readonly FoldedCharacter[], words: ClaimWordIndex): LatinWords {
  // Where the run of digits from each place ends, found once from the name's end back.
  const digitsEnd: number[] = [];
  for (let at = name.length; at >= 0; at -= 1) digitsEnd[at] = at < name.length && isDigit(name[at]!) ? digitsEnd[at + 1]! : at;
  const wordEnds = (from: number, word: string) => foundAt(name, from, [...word]) && endsWord(name, from, from + [...word].length) ? [from + [...word].length] : [];
  // A phrase's last word may take a plural "s" written on it ("Community Logins", "Community Sign-Ins"; not "TM Support").
  const pluralEnds = (from: number, word: string) => wordEnds(from, `${word}s`).filter((end) => !name[end - 1]!.afterGap);
  const phraseEnds = (at: number, phrase: readonly string[]) => phrase.reduce<number[]>((froms, word, i) =>
    froms.flatMap((from) => [...wordEnds(from, word), ...(i === phrase.length - 1 ? pluralEnds(from, word) : [])]), [at]);
  // A possessive "s" on its own after a gap ("Community's", "Community Account's Login").
  const possessive = (at: number) => foundAt(name, at, ['s']) && name[at]!.afterGap && endsWord(name, at, at + 1) ? at + 1 : at;
  // Digits are a word there ("Community365 Login"), and may begin one ("Community 2FA"); a word
  // of what the site holds may take a possessive as its name does.
  const wordsAt = (at: number): WordFound[] => [
    ...(words.get(name[at]?.character ?? '') ?? []).flatMap(({ words: phrase, bearing }) =>
      phraseEnds(at, phrase).map((end) => ({ end: bearing === 'holding' ? possessive(end) : end, bearing }))),
    ...(digitsEnd[at]! > at ? [{ end: digitsEnd[at]!, bearing: 'joining' as const }] : []),
  ];
  return { wordsAt, digitsEnd, possessive };
}

/**
 * Whether the site's name in an alphabet stands in `name` as the site's own, anywhere in it (English
 * sets what qualifies a name before it, "Your Community Account", "Secure Community Login", so only
 * what follows makes it another's), as a whole word (`beginsWord`, `endsWord`), as written or with
 * one slip of typing (`misspeltEnds`: "Comunity"), that
 * - ends the name (or meets Han or a tagline), after a number or a possessive "s" or not, with
 *   nothing before it but claims, connectors and numbers: "Community", "Community365" (a site
 *   numbers its own services: "Office365"), "Community's", "Official Community", "Sign in to the
 *   Community", "Community (unofficial)";
 * - or is followed by words of its service and connectors to the name's end or a tagline
 *   ("Community Support", "Community Help Center", "CommunityHub", "Community for iOS",
 *   "Community Support (EU)"), by a word that claims its accounts, whatever follows ("My Community
 *   Login Helper", "Community 2FA"), by a word of what it holds there or before another claim
 *   ("Community Account", "Community Account Security Checker"), or by Chinese that claims it as
 *   `hanNameEnds` reads it ("My Community账号").
 * An ordinary phrase keeps the word: "Community Garden Planner", "Garden Community",
 * "Community Service Tracker", "Community Account Exporter".
 */
function claimsSiteInAlphabet(name: readonly FoldedCharacter[], site: string, latin: LatinWords): boolean {
  const ends = (at: number) => at === name.length || EAST_ASIAN.test(name[at]!.character) || name[at]!.afterTagline;
  const { wordsAt, digitsEnd, possessive } = latin;
  let reached: boolean[] | undefined;
  let claiming: boolean[] | undefined;
  const hanEnds = hanNameEnds(name, site);
  const sought = [...site];
  const soughtLetters = asLetters(sought).letters;
  let spelt: { letters: string[]; starts: number[]; letterAt: Map<number, number> } | undefined;
  const misspelt = (start: number) => {
    if (soughtLetters.length < MISSPELT_FROM) return [];
    if (spelt === undefined) {
      const { letters, starts } = asLetters(name.map(({ character }) => character));
      spelt = { letters, starts, letterAt: new Map(starts.map((at, letter) => [at, letter])) };
    }
    const letter = spelt.letterAt.get(start);
    // A slip of typing stays inside a word: "Rivers Side" is two words, not "Riverside" misspelt.
    return letter === undefined ? [] : misspeltEnds(spelt.letters, letter, soughtLetters).map((end) => spelt!.starts[end]!)
      .filter((end) => !name.slice(start + 1, end).some(({ afterGap }) => afterGap));
  };
  for (let start = 0; start < name.length; start += 1) {
    if (!beginsWord(name, start)) continue;
    const found = foundAt(name, start, sought) ? [start + sought.length] : misspelt(start);
    for (const end of found.filter((end) => endsWord(name, start, end))) {
      const numbered = digitsEnd[end]!;
      const after = possessive(numbered);
      if (ends(after)) {
        reached ??= reachedPlaces(name.length, wordsAt);
        if (reached[start] || (HAN_OR_KANA.test(name[after]?.character ?? '') && !name[after]!.afterTagline && hanEnds(after))) return true;
      } else {
        claiming ??= claimingPlaces(name.length, ends, wordsAt);
        if (claiming[after] || claiming[end]) return true;
      }
    }
  }
  return false;
}

/**
 * The signs that `name` may pass for another name (attack88, attack90): a word whose letters mix
 * Latin with another script, or two look-alike alphabets ("Pаypal" with a Cyrillic а, "Gⵔⵔgle"; only
 * the plain space parts words here, not a hair or thin one); a name in a look-alike alphabet that
 * reads as Latin ("Рауреу", `readsAsLatin`); a letter or digit standing in for a plain one
 * (`standsInForPlain`: ＣＯＭ, 𝐏𝐚𝐲, Ⓟ, ᴘᴀʏᴘᴀʟ, ɡoogle); or one of `siteNames` standing as a name
 * of its own (`standsAsName`) once both are folded ("社 區官方", "C.o.m.m.u.n.i.t.y"). Nothing is
 * refused: a sign is for the person deciding.
 */
function lookAlikeSigns(name: string, siteNames: readonly string[], tables: LookAlikeTables): LookAlikeSign[] {
  const words = name.replace(/(?! )\p{Zs}/gu, '').split(/[^\p{L}\p{M}]+/u);
  const characters = [...name];
  const plainAlphabets = new Set(characters.filter((c) => c.normalize('NFKC') === c).map(alphabetOf).filter((i) => i >= 0));
  return [
    ...(words.some(mixesAlphabets) ? ['mixed_alphabets' as const] : []),
    ...(readsAsLatin(words, tables) ? ['reads_as_latin' as const] : []),
    ...(characters.some((_, i) => standsInForPlain(characters, i, plainAlphabets, tables)) ? ['styled_letters' as const] : []),
    ...(namesSite(foldedCharacters(name, tables), siteNames, tables) ? ['site_name' as const] : []),
  ];
}

/** Whether one of `siteNames` stands in the folded name as a name of its own (`standsAsName`). */
function namesSite(folded: readonly FoldedCharacter[], siteNames: readonly string[], tables: LookAlikeTables): boolean {
  return siteNames.map((site) => foldedForm(site, tables)).some((site) => site !== '' && standsAsName(folded, site));
}

/**
 * The forms `foldedForm` gave: it folds the site's names and the claim words, the same few texts
 * for every name read.
 */
const foldedForms = new BoundedMemo<string, string>(1024);

/** `text` as `foldedCharacters` reads it, in one string. */
function foldedForm(text: string, tables: LookAlikeTables): string {
  return foldedForms.get(text, () => foldedCharacters(text, tables).map(({ character }) => character).join(''));
}

/**
 * Symbols that read as the check mark sites set beside what they verified: check marks (✓ ✔ 🗸
 * 🮱 𐄂), checked boxes (☑ ✅ 🗹), the square root (√) and "not check mark" (⍻) drawn like them,
 * the OK button (🆗) and the circled 正 (㊣) that marks goods as genuine.
 */
const CHECK_MARKS = /[\u2713\u2714\u2611\u2705\u221a\u237b\u{1f5f8}\u{1f5f9}\u{1fbb1}\u{10102}\u{1f197}\u32a3]/u;

/**
 * Words that claim a review by the site. Alphabetic ones as whole words (`standsAsName`: "Official
 * Tools", "OfficialTools", not "Unofficial"): English official, verified, certified, trusted,
 * approved, and "official" in the languages a visitor most often brings beside them (French
 * officiel, Spanish and Portuguese oficial, German offiziell, Italian ufficiale, Dutch officieel).
 * Chinese ones anywhere, Simplified only (names are read through `simplified`: 認證 as 认证):
 * official, official site, certified, verified, checked, and 公认 (公認, "officially recognised" in
 * Japanese, "acknowledged by all" in Chinese, both an endorsement no app gives itself).
 */
const CLAIM_WORDS_LATIN = [
  'verified', 'official', 'officially', 'certified', 'trusted', 'approved',
  'officiel', 'officielle', 'oficial', 'offiziell', 'offizielle', 'ufficiale', 'officieel', 'officiele',
];
const CLAIM_WORDS_CHINESE = ['官方', '官网', '认证', '已验证', '已核实', '已审核', '公认'];
/**
 * Japanese words of review that Chinese writes in the same characters for everyday things: 公式
 * (Japanese "official", Chinese "formula": 公式编辑器), 認定 (Japanese "certified", Chinese
 * "determination": 资格认定), 正規 (Japanese "authorised, genuine", Chinese "regular": 正规化).
 * They claim in a name written in Japanese, one that holds kana (公式アプリ, 認定ツール), and
 * nowhere else, so that a Chinese community's formula calculator keeps its name.
 */
const CLAIM_WORDS_JAPANESE = ['公式', '认定', '正规'];
/** Hiragana and katakana (half-width ones after NFKC), which only Japanese writes. */
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
/** Katakana, in which Japanese writes words borrowed from other languages. */
const KATAKANA = /\p{Script=Katakana}/u;

/** What in a name claims the site's trust: a check mark, words of review, or the site's own name. */
export type TrustClaim = 'check_mark' | 'review_word' | 'site_name';

/**
 * The claims of the site's trust in `name`: a check-mark symbol (`CHECK_MARKS`), a word
 * that says it was reviewed (`CLAIM_WORDS_LATIN`, `CLAIM_WORDS_CHINESE`, `CLAIM_WORDS_JAPANESE`), anywhere in it, or one
 * of `siteNames` presented as the site's own (`namesItselfSite`), each read after NFKC (full-width and styled
 * letters as plain ones), in any letter case, Traditional Chinese as Simplified, spaces and
 * punctuation between letters aside ("V e r i f i e d", "官 方") and look-alike letters as their
 * skeleton ("Verіfied" with a Cyrillic і).
 */
function trustClaims(name: string, siteNames: readonly string[], tables: LookAlikeTables, words: ClaimWordIndex): TrustClaim[] {
  const folded = foldedCharacters(name, tables).map((c) => ({ ...c, character: oneStroke(c.character) }));
  const all = folded.map(({ character }) => character).join('');
  const reviewWord = CLAIM_WORDS_LATIN.some((word) => standsAsName(folded, oneStroke(foldedForm(word, tables))))
    || CLAIM_WORDS_CHINESE.some((word) => all.includes(word))
    || (KANA.test(name.normalize('NFKC')) && CLAIM_WORDS_JAPANESE.some((word) => all.includes(word)));
  return [
    ...(CHECK_MARKS.test(name) || CHECK_MARKS.test(name.normalize('NFKC')) ? ['check_mark' as const] : []),
    ...(reviewWord ? ['review_word' as const] : []),
    ...(namesItselfSite(folded, siteNames, tables, words) ? ['site_name' as const] : []),
  ];
}

/**
 * Whether the folded name presents itself as the site's own under one of `siteNames`, folded
 * alike: a name in an alphabet anywhere in it, alone or beside words of its service or accounts
 * (`claimsSiteInAlphabet`: "Community", "Community Account Security", "Sign in to Community"); a
 * name in Han or kana leading it, after nothing but a number or a sign-in or welcome
 * (`LEAD_INS_CHINESE`), as a name of its own (`hanNameEnds`: "社区安全中心", "1社区账号",
 * "登录河畔", "社群 官方", "社区 App"), as Chinese sets what
 * qualifies a name before it ("读书社区", a reading community). An ordinary phrase or compound
 * with the site's name ("Community Garden Planner", "社区团购助手") names an app for a community,
 * as apps on a community site commonly do, and one that makes a longer word of it
 * ("Communityhub") names something else.
 */
function namesItselfSite(folded: readonly FoldedCharacter[], siteNames: readonly string[], tables: LookAlikeTables, words: ClaimWordIndex): boolean {
  const latin = latinWordsIn(folded, words);
  // Where a Chinese site's name may begin: after nothing but numbers, lead-ins and the English
  // words that lead a name in an alphabet, its service's aside ("1社区账号", "登录河畔", "Your
  // 社区账号", "Sign in to 社区"), as a product's name before it is what it qualifies ("Linux社区").
  const leads = reachedPlaces(folded.length, (at) => [
    ...LEAD_INS_CHINESE.filter((word) => foundAt(folded, at, [...word])).map((word) => ({ end: at + [...word].length, bearing: 'joining' as const })),
    ...latin.wordsAt(at).filter(({ bearing }) => bearing !== 'service' && bearing !== 'self'),
  ]);
  return siteNames.flatMap(namesOfSite).map((site) => oneStroke(foldedForm(site, tables))).some((site) => {
    if (site === '') return false;
    if (!EAST_ASIAN.test(site)) return claimsSiteInAlphabet(folded, site, latin);
    const hanEnds = hanNameEnds(folded, site);
    return leads.some((reached, at) => reached && foundAt(folded, at, [...site]) && hanEnds(at + [...site].length));
  });
}

/**
 * Where a site's name gives way to what it adds: a comma, semicolon, bar, middle dot or bullet,
 * ideographic full stop, bracket or parenthesis, in either width, or a dash between spaces
 * ("Riverside, Est. 2009", "河畔（始于2009）", "河畔・讨论区", "河畔。始于2009",
 * "Lakeside - a place to talk"). A Latin full stop is not one: it ends abbreviations
 * ("St. Mary's") and parts domains ("Example.org").
 */
const TAGLINE = /\s*[,;|·‧∙⋅・•。()[\]{}<>«»，；｜、（）【】《》〔〕]\s*|\s+[-–—]\s+|\s*[–—]\s*/u;

/**
 * The site's name as an app may not call itself: the whole of it, and the part before a tagline
 * (`TAGLINE`), which is what people call the site ("Riverside, Est. 2009" is Riverside).
 */
function namesOfSite(site: string): string[] {
  const first = site.normalize('NFKC').split(TAGLINE)[0]!.trim();
  return first !== '' && /[\p{L}\p{N}]/u.test(first) && first !== site ? [site, first] : [site];
}

/**
 * `folded` with l as i: the confusables data reads 1, | and ǀ as l but a capital I as i, and a
 * sans-serif face draws I, l and 1 alike, so "VERlFlED", "Ver1fied" and "Offlcial" read as the
 * words they imitate. Only for claims, where both sides are read alike.
 */
function oneStroke(folded: string): string {
  return folded.replaceAll('l', 'i');
}

/**
 * The blocks Unicode gives right-to-left letters by default (bidi classes R and AL: Hebrew, Arabic,
 * Syriac, Thaana, N'Ko and their kin, UAX #9 and DerivedBidiClass.txt).
 */
const RIGHT_TO_LEFT = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;
/** Direction marks, embeddings, overrides and isolates (UAX #9 2), and the Arabic letter mark. */
const DIRECTION_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Whether `text` could reorder the words beside it: it holds a right-to-left letter or a direction control. */
export function needsIsolation(text: string): boolean {
  return RIGHT_TO_LEFT.test(text) || DIRECTION_CONTROLS.test(text);
}

/**
 * A name in plain text beside other words (a `<title>`, a heading made of one message, a field's
 * label, a mail's subject and body): isolated as `<bdi>` would (Unicode FSI … PDI) when it holds a right-to-left letter or a
 * direction control (`needsIsolation`), the cases where it could reorder the words beside it (the
 * @username beside a nickname); other names are left bare, as bookmarks and tab lists of some
 * systems show the isolates as boxes (attack86).
 */
export function isolated(text: string): string {
  return needsIsolation(text) ? `\u2068${text}\u2069` : text;
}

let loading: Promise<LookAlikeTables> | undefined;

/**
 * The look-alike tables, loaded when first needed (staff looking at an app, a name nobody at the
 * site reviewed being checked), not at start-up, as 2 MB of heap that no other request reads
 * (issue 35 item 5: peak RSS).
 */
function lookAlikeTables(): Promise<LookAlikeTables> {
  loading ??= (async () => {
    const [{ default: confusables }, { default: tsCharacters }] = await Promise.all([
      import('unhomoglyph/data.json', { with: { type: 'json' } }), import('opencc-js/dict/TSCharacters'),
    ]);
    return {
      prototypes: eachCharacterBy(new Map(Object.entries(confusables))),
      simplified: eachCharacterBy(new Map(tsCharacters.split('|').map((pair) => pair.split(' ') as [string, string]))),
    };
  })();
  return loading;
}

/**
 * `text` with each character that `table` holds replaced by its value. Both tables map single
 * characters (6,311 confusables, 3,512 Traditional characters), so this reads them as the packages'
 * own matchers do, unhomoglyph's one regular expression of every key and OpenCC's trie of a Map
 * per character, which held 6.3 and 5.3 MB more once loaded (decision 62). One difference, kept:
 * OpenCC leaves an ideographic description sequence (⿰言舌, a description of one character)
 * as written, where this folds its parts too, as a name is read by how it looks.
 */
function eachCharacterBy(table: ReadonlyMap<string, string>): (text: string) => string {
  return (text) => {
    let replaced = '';
    for (const character of text) replaced += table.get(character) ?? character;
    return replaced;
  };
}

/** `lookAlikeSigns`, once its tables are loaded. */
export async function lookAlikeCheck(): Promise<(name: string, siteNames: readonly string[]) => LookAlikeSign[]> {
  const tables = await lookAlikeTables();
  return (name, siteNames) => lookAlikeSigns(name, siteNames, tables);
}

let checking: Promise<(name: string, siteNames: readonly string[]) => TrustClaim[]> | undefined;

/**
 * `trustClaims`, once its tables are loaded and its words folded: built once and shared, as folding
 * the words again cost each unauthenticated registration (RFC 7591) more than reading its name.
 */
export function trustClaimCheck(): Promise<(name: string, siteNames: readonly string[]) => TrustClaim[]> {
  checking ??= (async () => {
    const tables = await lookAlikeTables();
    const words = latinClaimWords(tables);
    return (name: string, siteNames: readonly string[]) => trustClaims(name, siteNames, tables, words);
  })();
  return checking;
}
