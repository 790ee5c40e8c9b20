import { ApiError } from "../sync/api.js";

// A sentence a person understands, from an API failure.
export function explain(error, doing) {
  if (!(error instanceof ApiError)) return `${doing}: ${error?.message ?? error}`;
  if (error.offline) return `${doing}: no connection. Try again when you are back online.`;
  if (error.status === 401) return `${doing}: your session ended. Sign in again.`;
  if (error.status === 404) return `${doing}: it no longer exists, or you cannot see it.`;
  return `${doing}: ${error.message}`;
}
