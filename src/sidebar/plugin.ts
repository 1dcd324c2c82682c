// The runtime part of the "media enhance" sidebar plugin (package.json `node-red.plugins`): it registers
// the plugin, installs the admin routes and starts publishing the state to the editors. The editor part
// is plugins/media-enhance-sidebar.html.
import { installAdminRoutes } from './admin-routes';
import type { PluginRed } from './plugin-api';
import { sidebarRegistry } from './registry';
import { ResultDetailCache } from './result-details';
import { StatePublisher } from './state-publisher';

export const PLUGIN_ID = 'media-enhance-sidebar';

export default function register(RED: PluginRed): void {
  const publisher = new StatePublisher(
    sidebarRegistry,
    (topic, data, retain) => RED.comms.publish(topic, data, retain),
    {
      warn: (message) => RED.log.warn(message),
    },
  );
  RED.plugins.registerPlugin(PLUGIN_ID, {
    onadd: () => {
      installAdminRoutes(RED, sidebarRegistry, new ResultDetailCache(sidebarRegistry));
      publisher.start();
    },
  });
}
