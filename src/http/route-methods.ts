import type { FastifyInstance } from 'fastify';

/**
 * Every method the router takes (all Node parses but CONNECT, `buildApp`) but `taken`: for a
 * catch-all that answers whatever no route of its path takes.
 */
export function methodsBut(app: FastifyInstance, ...taken: string[]): string[] {
  return app.supportedMethods.filter((method) => !taken.includes(method));
}

/**
 * The methods each route path takes, to tell a path asked with another method (405, RFC 9110
 * 15.5.6) from one that does not exist (404). A path's parameters (`:id`) and wildcard (`*`)
 * match any segment, as Fastify's router matches them. `Allow` does not list OPTIONS.
 */
export class RouteMethods {
  private readonly fixed = new Map<string, Set<string>>();
  private readonly patterns: Array<{ pattern: RegExp; methods: Set<string> }> = [];
  private readonly taken = new Set<string>();

  add(url: string, method: string | string[]): void {
    // CORS preflights (OPTIONS) answer for whole subtrees of the API, so they tell no path exists.
    const taken = (Array.isArray(method) ? method : [method]).filter((one) => one !== 'OPTIONS');
    if (taken.length === 0) return;
    let methods: Set<string> | undefined;
    if (/[:*]/.test(url)) {
      const source = url.split('/')
        .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      methods = new Set();
      this.patterns.push({ pattern: new RegExp(`^${source}$`), methods });
    } else {
      methods = this.fixed.get(url) ?? new Set();
      this.fixed.set(url, methods);
    }
    for (const one of taken) {
      methods.add(one);
      this.taken.add(one);
    }
  }

  /**
   * What the server as a whole supports (`OPTIONS *`, RFC 9110 9.3.7), sorted: every method some
   * path takes, and OPTIONS, which the server answers itself.
   */
  ofServer(): string[] {
    return [...this.taken, 'OPTIONS'].sort();
  }

  /** The methods `url`'s path takes, sorted; none when no route has that path. */
  of(url: string): string[] {
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const found = new Set(this.fixed.get(path));
    for (const { pattern, methods } of this.patterns) if (pattern.test(path)) for (const method of methods) found.add(method);
    return [...found].sort();
  }
}
