// `--storage s3://<bucket>/<prefix>`: where the media files of a cluster of engines are kept.

export interface S3Location {
  bucket: string;
  /** Empty, or ending in `/`: the start of every key. */
  prefix: string;
}

/** S3's bucket naming rules (DNS-compatible names: what every S3-compatible service accepts). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses a storage URL; an error names the option, the value and the rule. */
export function parseS3Location(url: string, option = 'storage'): S3Location {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(url);
  if (!match)
    throw new TypeError(
      `${option}: must be s3://<bucket>/<prefix> (the prefix may be empty) (got ${JSON.stringify(url)})`,
    );
  const [, bucket, rest = ''] = match;
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new TypeError(
      `${option}: the bucket must be 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit (got ${JSON.stringify(bucket)})`,
    );
  const parts = rest.split('/').filter((part) => part !== '');
  if (parts.some((part) => part === '.' || part === '..'))
    throw new TypeError(`${option}: the prefix may not hold "." or ".." segments (got ${JSON.stringify(rest)})`);
  return { bucket, prefix: parts.length > 0 ? `${parts.join('/')}/` : '' };
}
