// When an answer is over for good: its response closed, or its connection did. Node emits `close` only on
// the response under way on a connection; one still queued behind it (a pipelined request) never gets one
// when the client drops the connection, so what a request holds (an upload's place, a held wait's) would
// be held for good. A request's own `close` is no help either: it comes as soon as its body is read.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Per connection, the answers on it still to be told it closed: one `close` listener however many are queued. */
const pendingOn = new WeakMap<Socket, Set<() => void>>();

/** Calls `done` once, when `res` closes or its connection `socket` does (at once when that is gone already). */
export function whenAnswerGone(res: ServerResponse, socket: Socket, done: () => void): void {
  if (socket.destroyed) {
    done();
    return;
  }
  const answers = pendingAnswers(socket);
  const gone = () => {
    answers.delete(gone);
    res.off('close', gone);
    done();
  };
  answers.add(gone);
  res.once('close', gone);
}

function pendingAnswers(socket: Socket): Set<() => void> {
  let answers = pendingOn.get(socket);
  if (!answers) {
    const all = new Set<() => void>();
    socket.once('close', () => {
      for (const gone of all) gone();
    });
    pendingOn.set(socket, all);
    answers = all;
  }
  return answers;
}
