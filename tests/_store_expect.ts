// What each lease store call must answer and publish, as the model
// (_store_model.ts) predicts it for store_invariants_test.ts.

/** What a call that reports the fleet must answer. */
export interface ViewExpect {
  readonly othersWaiting: number;
  readonly share: number;
  /** Fences handed over earlier and still live, in hand-over order. */
  readonly handed: readonly number[];
}

export interface AcquireExpect extends ViewExpect {
  readonly grant: number;
}

export interface RenewExpect extends ViewExpect {
  readonly lost: readonly number[];
}

export interface ReleaseExpect {
  readonly released: number;
  readonly othersWaiting: number;
  readonly share: number;
  /** Who receives each freed lease, in fence order. */
  readonly picks: readonly string[];
}

/**
 * A notice a call must publish, to one holder or (`to` "*") to every one
 * subscribed to the key. The caller adds the call's seq and the fences.
 */
export type NoticeExpect =
  | { readonly kind: "released"; readonly to: "*" }
  | {
    readonly kind: "wanted";
    readonly to: string;
    readonly holder: string;
    readonly share: number;
  }
  | {
    readonly kind: "granted";
    readonly to: string;
    readonly tag: number;
    readonly othersWaiting: number;
    readonly share: number;
  };
