// media-enhance-video: uploads a video (Buffer or path) and starts its enhancement (v1 multipart); its
// messages are not kept across restarts.
import { ENHANCE_VIDEO } from './file-request';
import { fileRequestNode } from './file-request-node';

export default fileRequestNode('media-enhance-video', ENHANCE_VIDEO, { keepsMessages: false });
