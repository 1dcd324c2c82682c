// npm run try:s3: a real S3 server to try the engine's --storage with, on this machine: the single-node
// Ceph (one monitor, one memory-backed OSD, radosgw) the storage tests start, on a free loopback port,
// until Ctrl-C. It keeps nothing: its objects go when it stops. Needs Debian's radosgw, ceph-mon, ceph-osd.
import { radosgwMissing, startTestRadosgw } from '../test/fixtures/radosgw-server';

async function main(): Promise<void> {
  const missing = radosgwMissing();
  if (missing) {
    console.error(`npm run try:s3: ${missing}`);
    process.exit(1);
  }
  console.log('starting a single-node Ceph with radosgw on loopback (about 15 s) ...');
  const s3 = await startTestRadosgw();
  console.log(`\nS3 endpoint: ${s3.endpoint} (Ctrl-C stops it; nothing is kept)\n\nIn another terminal:\n`);
  console.log(
    `export AWS_ACCESS_KEY_ID=${s3.env.AWS_ACCESS_KEY_ID} AWS_SECRET_ACCESS_KEY=${s3.env.AWS_SECRET_ACCESS_KEY} AWS_REGION=${s3.env.AWS_REGION}`,
  );
  console.log(
    `npx media-enhance-engine --storage s3://media-enhance/try --s3-endpoint ${s3.endpoint} --s3-force-path-style\n`,
  );
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void s3.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
