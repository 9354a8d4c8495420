/** An unsigned JWT (RFC 7519 6.1, `alg: none`): what an attacker forges; it must never be accepted. */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}
