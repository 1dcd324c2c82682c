/// <reference lib="dom" />
// The tab's services section: rendered again only when its text changed, and the folded counts of a
// service (the operations without limits) the user opened stay open through a new render.
import type { Translate } from './format';
import { renderServices } from './render-services';
import type { ServiceState } from './shapes';

export function servicesSection(
  element: HTMLElement,
  t: Translate,
): { render(services: ServiceState[], now: number): void } {
  let shown = '';
  /** The services whose folded counts the user opened. */
  const opened = new Set<string>();
  element.addEventListener(
    'toggle',
    (event) => {
      const folded = event.target as HTMLDetailsElement;
      const id = folded.closest<HTMLElement>('.me-service')?.dataset.serviceId;
      if (id === undefined || !folded.matches('.me-ops-unlimited')) return;
      if (folded.open) opened.add(id);
      else opened.delete(id);
    },
    true, // toggle does not bubble
  );
  return {
    render(services, now) {
      const html = renderServices(t, services, now);
      if (html === shown) return;
      element.innerHTML = shown = html;
      for (const id of opened)
        element
          .querySelector<HTMLDetailsElement>(`.me-service[data-service-id="${CSS.escape(id)}"] .me-ops-unlimited`)
          ?.setAttribute('open', '');
    },
  };
}
