/** The cluster's one error type: `code` says which promise could not be kept. */
import { AntlerError, type AntlerErrorOptions } from "../errors.js";

export type ClusterErrorCode =
  /** A timing or name in `ClusterOptions` cannot work. */
  | "cluster_options"
  /** A broadcast's payload is larger than NOTIFY carries. */
  | "broadcast_too_large"
  /** A call the cluster cannot honour as made (a second `lead` of one channel, a reserved topic). */
  | "cluster_usage"
  /** The cluster was closed (or halted) before the call could finish. */
  | "cluster_closed";

export class ClusterError extends AntlerError {
  declare readonly code: ClusterErrorCode;

  constructor(code: ClusterErrorCode, message: string, options: AntlerErrorOptions = {}) {
    super(code, `[antler] [cluster] ${message}`, options);
  }
}
