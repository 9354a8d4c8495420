/** Absolute addresses of the site's resources (INTERFACE section 7: they resolve, under BASE_URL). */
export interface SiteUrls {
  profile(username: string): string;
  avatar(userId: number): string;
  post(postId: number): string;
  docs(): string;
}

export function siteUrls(baseUrl: string): SiteUrls {
  return {
    profile: (username) => `${baseUrl}/u/${encodeURIComponent(username)}`,
    avatar: (userId) => `${baseUrl}/avatars/${userId}`,
    post: (postId) => `${baseUrl}/posts/${postId}`,
    docs: () => `${baseUrl}/docs`,
  };
}
