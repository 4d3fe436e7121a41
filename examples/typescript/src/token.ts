// A player token as the table service takes it: a JWT signed with HS256 under the stack's
// TOKEN_SIGNING_KEY, with the claims `cardtable token NAME` puts in one (README, "Calling the
// table service"). Node's crypto is enough for HS256, so no JWT library is needed.

import { createHmac } from "node:crypto";

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString("base64url");
}

/** A person's token for `player`, valid for `ttlSeconds` (the service allows at most a day). */
export function personToken(signingKey: string, player: string, ttlSeconds = 3600): string {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const claims = base64url(
    JSON.stringify({ sub: player, kind: "person", iss: "cardtable", iat: now, exp: now + ttlSeconds }),
  );
  const signature = createHmac("sha256", signingKey).update(`${header}.${claims}`).digest();
  return `${header}.${claims}.${base64url(signature)}`;
}
