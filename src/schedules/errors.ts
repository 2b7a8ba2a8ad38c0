/** Why a schedule could not be made or changed; the message is fit to show the person who asked. */
import { AntlerError, type AntlerErrorOptions } from "../errors.js";

export type ScheduleErrorCode =
  /** The timing or the action is not valid (bad cron, unknown time zone, a time in the past). */
  | "schedule_invalid"
  /** A limit of `schedules:` would be passed (per conversation, per tenant, shortest interval). */
  | "schedule_limit"
  /** No schedule of this conversation has that id or number. */
  | "schedule_not_found"
  /** The schedule is not the asker's to change (a config schedule). */
  | "schedule_forbidden";

export class ScheduleError extends AntlerError {
  declare readonly code: ScheduleErrorCode;

  constructor(code: ScheduleErrorCode, message: string, options: AntlerErrorOptions = {}) {
    super(code, message, options);
  }
}
