// The sidebar script's entry in the browser: one global, MediaEnhanceSidebar, that the plugin's .html
// calls to build its tab and to explain the deploy warning. The chart's functions ride along so that a
// test can run the bundled copy.
import { chartSvg } from './chart-svg';
import { explainDeployWarnings } from './deploy-reasons';
import { loudnessChart } from './loudness-chart';
import { createSidebarTab } from './sidebar-tab';

export const SIDEBAR_GLOBAL = 'MediaEnhanceSidebar';

(globalThis as Record<string, unknown>)[SIDEBAR_GLOBAL] = {
  createTab: createSidebarTab,
  explainDeployWarnings,
  loudnessChart,
  chartSvg,
};
