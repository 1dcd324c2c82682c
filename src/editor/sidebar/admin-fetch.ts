/// <reference lib="dom" />
// The tab's requests to the runtime's admin routes, made as the editor's own are.
import type { RedForSidebar } from './red-for-sidebar';

/**
 * An admin request as the editor's own are made: relative to the editor (so httpAdminRoot holds), with
 * the user's token when adminAuth is on.
 */
export function adminFetch(red: RedForSidebar, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const tokens = red.settings.get('auth-tokens') as { access_token?: string } | undefined;
  if (tokens?.access_token) headers.set('Authorization', `Bearer ${tokens.access_token}`);
  headers.set('Node-RED-API-Version', 'v2');
  return fetch(`${red.settings.apiRootUrl ?? ''}${path}`, { ...init, headers, cache: 'no-store' });
}

export async function adminJson<T>(red: RedForSidebar, path: string): Promise<T> {
  const response = await adminFetch(red, path, { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${response.statusText}`);
  return (await response.json()) as T;
}

/**
 * An admin action: a POST with a JSON body, which no other site's page can make without the runtime's
 * consent (CORS). An answer that is not ok throws, its status as the reason.
 */
export async function adminPost(red: RedForSidebar, path: string): Promise<Response> {
  const response = await adminFetch(red, path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{}',
  });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return response;
}
