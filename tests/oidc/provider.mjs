// The OpenID provider Jig's sign-in tests run against: npm's certified `oidc-provider`, on
// loopback, with its development login page (any password; the login name is the account).
//
//   JIG_OIDC_MODULES=~/.cache/jig-oidc/node_modules PORT=0 REDIRECTS=url1,url2 node provider.mjs
//
// Prints {"issuer": "http://127.0.0.1:PORT"} once it listens. The people and their groups are
// those of docs/teams.md's example mapping: alice runs tools, bob approves, carol looks on, dana
// administers, and erin is in no group Jig maps. One confidential client, `jig`, whose secret is
// $CLIENT_SECRET; it must use PKCE.
import { createServer } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.JIG_OIDC_MODULES;
if (!modules) throw new Error("JIG_OIDC_MODULES names the node_modules holding oidc-provider");
const { default: Provider } = await import(
  pathToFileURL(join(modules, "oidc-provider/lib/index.js")).href
);

const people = {
  alice: ["Alice Runner", ["runners"]],
  bob: ["Bob Approver", ["approvers"]],
  carol: ["Carol Viewer", ["viewers"]],
  dana: ["Dana Admin", ["admins"]],
  erin: ["Erin Contractor", ["contractors"]],
};

/** A free loopback port, when PORT is 0: the issuer must name its port before listening. */
async function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const port = Number(process.env.PORT) || (await freePort());
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: "jig",
      client_secret: process.env.CLIENT_SECRET ?? "jig-e2e-client-secret",
      redirect_uris: (process.env.REDIRECTS ?? "").split(",").filter(Boolean),
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  pkce: { required: () => true },
  scopes: ["openid", "email", "profile", "groups"],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name", "preferred_username"],
    groups: ["groups"],
  },
  // The scopes' claims go into the ID token itself, which is all Jig reads.
  conformIdTokenClaims: false,
  findAccount: (_ctx, id) => {
    const known = people[id];
    if (!known) return undefined;
    const [name, groups] = known;
    return {
      accountId: id,
      claims: () => ({
        sub: id,
        name,
        preferred_username: id,
        email: `${id}@acme.example`,
        email_verified: true,
        groups,
      }),
    };
  },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: [`jig-e2e-${process.pid}-${Date.now()}`] },
});
provider.listen(port, "127.0.0.1", () => {
  console.log(JSON.stringify({ issuer }));
});
