/**
 * Tenants partition everything Antler stores. The binding store and the checkpointer both scope
 * their rows by tenant name; rows written before tenants existed belong to `DEFAULT_TENANT`.
 */

/** The tenant of a gateway configured without `tenants:`, and of rows stored before them. */
export const DEFAULT_TENANT = "default";
