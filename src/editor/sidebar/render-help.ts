// The tab's own help: what each figure means, from the message catalog, in a section the toolbar's "?" opens.
import type { Translate } from './format';
import { element } from './markup';

/** Each entry's term and text, as literal keys so that the catalog test finds them in use. */
const ENTRIES: [term: string, text: string][] = [
  ['sidebar.help.service.term', 'sidebar.help.service.text'],
  ['sidebar.help.bar.term', 'sidebar.help.bar.text'],
  ['sidebar.help.queued.term', 'sidebar.help.queued.text'],
  ['sidebar.help.rateLimited.term', 'sidebar.help.rateLimited.text'],
  ['sidebar.help.tooManyRequests.term', 'sidebar.help.tooManyRequests.text'],
  ['sidebar.help.poller.term', 'sidebar.help.poller.text'],
  ['sidebar.help.inFlight.term', 'sidebar.help.inFlight.text'],
  ['sidebar.help.results.term', 'sidebar.help.results.text'],
  ['sidebar.help.integrated.term', 'sidebar.help.integrated.text'],
  ['sidebar.help.truePeak.term', 'sidebar.help.truePeak.text'],
  ['sidebar.help.range.term', 'sidebar.help.range.text'],
  ['sidebar.help.chart.term', 'sidebar.help.chart.text'],
  ['sidebar.help.listen.term', 'sidebar.help.listen.text'],
  ['sidebar.help.storage.term', 'sidebar.help.storage.text'],
];

/**
 * The help, hidden until the "?" of the tab's toolbar opens it: a line for it at the top would push the
 * results below the first screen of Node-RED 5's shorter sidebar section.
 */
export function renderHelp(t: Translate): string {
  const entries = ENTRIES.map(([term, text]) => `${element('dt', {}, t(term))}${element('dd', {}, t(text))}`);
  return [
    '<section class="me-help" id="me-help" hidden>',
    element('h3', { class: 'me-section-title' }, t('sidebar.help.title')),
    `<dl>${entries.join('')}</dl>`,
    '</section>',
  ].join('');
}

/** The toolbar's button that opens and closes the help. */
export function helpToggle(t: Translate): string {
  return element(
    'button',
    {
      type: 'button',
      class: 'red-ui-footer-button me-help-toggle',
      title: t('sidebar.help.title'),
      'aria-label': t('sidebar.help.title'),
      'aria-controls': 'me-help',
      'aria-expanded': 'false',
    },
    '?',
  );
}
