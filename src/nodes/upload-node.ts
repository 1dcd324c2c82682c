// media-enhance-upload: sends a file (Buffer or path) to the service (v2) and passes on its media uid.
// A file from a path is kept on disk until its message is sent on, so an upload queued or cut by a
// restart or a redeploy is made when the node starts again (a Buffer cannot be kept: the stop warns).
import { UPLOAD } from './file-request';
import { fileRequestNode } from './file-request-node';

export default fileRequestNode('media-enhance-upload', UPLOAD, { keepsMessages: true, settles: true });
