/** A JSON value: what the stores keep in their JSON columns. */
export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
