// Where the enhance-json fetch may connect. An engine exposed beyond loopback must not fetch from
// internal addresses for a caller (loopback services, the LAN, cloud metadata): every hop's host is
// checked, an address literal before connecting, a name after its DNS lookup, inside the connection
// itself, so the address checked is the address connected to (no DNS rebinding in between).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { BlockList } from 'node:net';
import { Agent } from 'undici';
import { familyOf, internalAddressKind, parseNetworks } from './address-policy';

export interface FetchTargets {
  /** Internal addresses may be fetched (an engine on loopback only). */
  allowPrivate: boolean;
  /** Addresses and CIDR ranges allowed even when internal ones are refused. */
  allowFrom: string[];
}

/** A target the policy refuses; the message names the address and why (for the engine's log only). */
export class RefusedTarget extends Error {
  readonly code = 'EREFUSEDTARGET';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class FetchGuard {
  /** The dispatcher every fetch goes through: its connections look names up through the policy. */
  readonly dispatcher: Agent;
  private readonly allowed: BlockList;

  constructor(private readonly targets: FetchTargets) {
    this.allowed = parseNetworks(targets.allowFrom, 'allowFetchFrom');
    this.dispatcher = new Agent(targets.allowPrivate ? {} : { connect: { lookup: this.lookup } });
  }

  /** Why a URL's host may not be fetched when it is an address literal (connected to without a lookup); undefined if it may. */
  refuseHost(hostname: string): string | undefined {
    const bare = hostname.replace(/^\[|\]$/g, '');
    return familyOf(bare) ? this.refuseAddress(bare) : undefined;
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }

  private refuseAddress(address: string): string | undefined {
    if (this.targets.allowPrivate) return undefined;
    const family = familyOf(address);
    if (family && this.allowed.check(address, family)) return undefined;
    const kind = internalAddressKind(address);
    return (
      kind &&
      `${address} is a ${kind} address, and this engine listens beyond loopback (allowPrivateFetch, --allow-private-fetch or --allow-fetch-from allow it)`
    );
  }

  /** net.connect's `lookup`: resolves as usual, then keeps only the addresses the policy allows. */
  private readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const refusals = addresses.map((a) => this.refuseAddress(a.address));
      const allowed = addresses.filter((_a, i) => refusals[i] === undefined);
      if (allowed.length === 0)
        return callback(new RefusedTarget(`${hostname}: ${refusals.find(Boolean) ?? 'no address'}`), '');
      if (options.all) callback(null, allowed);
      else callback(null, allowed[0].address, allowed[0].family);
    });
  };
}
