// This launch's key: `dynaslice serve` prints the page's URL with a
// per-launch secret in its fragment (`#token=…`), and every API call must
// carry it in `X-Dynaslice-Token` (docs/API.md, "Threat model"). The
// fragment never reaches a server or a Referer; the page moves it into
// sessionStorage (this tab only, gone when the tab closes) and takes it out
// of the address bar, so it is not bookmarked, shared or left on screen.

const STORAGE_KEY = 'dynaslice-token';

/** The token of this page, once `takeToken` ran. */
let current = null;

/** The token in the address bar's fragment, or null. */
function tokenInFragment() {
  if (!location.hash.startsWith('#')) return null;
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  return token ? token : null;
}

/**
 * Moves a `#token=` out of the address bar into sessionStorage (a token in
 * the fragment replaces a stored one: it is the newest link the user
 * opened). Returns the token to send, or null when the page has none.
 * @returns {string | null}
 */
export function takeToken() {
  const fromFragment = tokenInFragment();
  if (fromFragment) {
    try {
      sessionStorage.setItem(STORAGE_KEY, fromFragment);
    } catch {
      // Storage refused (a privacy mode): the token still lives in memory
      // for this page; a reload then needs the link again.
    }
    history.replaceState(history.state, '', `${location.pathname}${location.search}`);
    current = fromFragment;
    return current;
  }
  try {
    current = sessionStorage.getItem(STORAGE_KEY);
  } catch {
    current = null;
  }
  return current;
}

/** The token every API call carries (null before `takeToken` found one). */
export function token() {
  return current;
}
