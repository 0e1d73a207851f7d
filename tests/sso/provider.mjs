// A real OpenID Connect provider for the single sign-on tests (the oidc-provider
// package, from npm), listening on 127.0.0.1. Its sign-in page accepts any user
// name (the package's development interactions); each account's claims come from
// the ACCOUNTS environment variable: {"user": {"groups": [...], "email": ...}}. The
// account's subject is the name signed in with; its display name ("preferred_username")
// is the same unless the account gives another, as two people at a provider may share one.
// Usage: node provider.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI[,REDIRECT_URI...]
import Provider from "oidc-provider";

const [port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const accounts = JSON.parse(process.env.ACCOUNTS || "{}");
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUri.split(","),
      token_endpoint_auth_method: "client_secret_post",
      id_token_signed_response_alg: "RS256",
    },
  ],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name", "given_name", "family_name", "preferred_username"],
    groups: ["groups"],
  },
  scopes: ["openid", "email", "profile", "groups"],
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  async findAccount(ctx, id) {
    const account = accounts[id] || {};
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          preferred_username: account.preferred_username || id,
          email: account.email || `${id}@example.com`,
          email_verified: true,
          name: account.name || id,
          groups: account.groups || [],
        };
      },
    };
  },
});
provider.proxy = false;

provider.listen(Number(port), "127.0.0.1", () => {
  console.log(JSON.stringify({ event: "listening", issuer }));
});
