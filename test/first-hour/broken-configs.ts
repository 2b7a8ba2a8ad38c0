/**
 * Broken configs a new user writes in the first hour, each with the one line `antler start`
 * must print for it (the key and the fix). Shared by the test and by the table in
 * src/config/README.md.
 */

/** What a case's config is built from: a free port for the server, and one where nothing answers. */
export interface Ports {
  server: number;
  closed: number;
  /** A port another program holds while the case runs. */
  taken: number;
}

export interface BrokenConfig {
  name: string;
  /** The config file's text. */
  text: (ports: Ports) => string;
  /** The one line start prints, without the leading "config error: ". */
  line: RegExp;
  /** The key doctor's report names. */
  key: string;
  /** Environment for the run (a variable left empty, for one). */
  env?: Record<string, string | undefined>;
}

/** A config that starts: a free port, storage beside the file, a model endpoint that is down (start does not probe it). */
export const base = (p: Ports, server = `server:\n  port: ${p.server}\n`) =>
  `${server}storage:\n  path: ./antler.db\nmodels:\n  - name: default\n    model: m\n    base_url: http://127.0.0.1:${p.closed}/v1\n`;

export const BROKEN_CONFIGS: BrokenConfig[] = [
  {
    name: "typo'd enabled (enable)",
    text: (p) => `${base(p)}channels:\n  telegram:\n    enable: true\n    bot_token: "123:abc"\n`,
    line: /^channels\.telegram\.enable: unknown key: did you mean `enabled`\?/,
    key: "channels.telegram.enable",
  },
  {
    name: "typo'd enabled (enabeld)",
    text: (p) => `${base(p)}channels:\n  slack:\n    enabeld: true\n`,
    line: /^channels\.slack\.enabeld: unknown key: did you mean `enabled`\?/,
    key: "channels.slack.enabeld",
  },
  {
    name: "models[].use names a file that does not exist",
    text: (p) => `${base(p)}    use: ./no-such-model.js:ChatModel\n`,
    line: /^models\[0\]\.use: .*no-such-model\.js does not exist: fix models\[0\]\.use/,
    key: "models[0].use",
  },
  {
    name: "tools[].use names a file that does not exist",
    text: (p) => `${base(p)}tools:\n  - name: search\n    use: ./no-such-tool.js:search\n`,
    line: /^tools\[0\]\.use: .*no-such-tool\.js does not exist: fix tools\[0\]\.use/,
    key: "tools[0].use",
  },
  {
    name: "a channel's use: names a file that does not exist",
    text: (p) => `${base(p)}channels:\n  mine:\n    enabled: true\n    use: ./no-such-channel.js:MyChannel\n`,
    line: /^channels\.mine\.use: .*no-such-channel\.js does not exist/,
    key: "channels.mine.use",
  },
  {
    name: "agent.graph names a file that does not exist",
    text: (p) => `${base(p)}agent:\n  backend: graph\n  graph: ./no-such-graph.js:graph\n`,
    line: /^agent\.graph: .*no-such-graph\.js does not exist: fix agent\.graph/,
    key: "agent.graph",
  },
  {
    name: "agent.backend names a class file that does not exist",
    text: (p) => `${base(p)}agent:\n  backend: ./no-such-backend.js:MyHarness\n`,
    line: /^agent\.backend: .*no-such-backend\.js does not exist: fix agent\.backend/,
    key: "agent.backend",
  },
  {
    name: "the port is in use",
    text: (p) => base(p, `server:\n  port: ${p.taken}\n`),
    line: /^server\.port: 127\.0\.0\.1:\d+ is already in use .*set server\.port to a free port/,
    key: "server.port",
  },
  {
    name: "server.host is not an address of this machine",
    text: (p) => base(p, `server:\n  host: 192.0.2.7\n  port: ${p.closed}\n`),
    line: /^server\.host: 192\.0\.2\.7 is not an address of this machine: set server\.host/,
    key: "server.host",
  },
  {
    name: "Telegram enabled without its token",
    text: (p) => `${base(p)}channels:\n  telegram:\n    enabled: true\n`,
    line: /^channels\.telegram\.bot_token: required in polling mode .*write bot_token under channels\.telegram in \S+config\.yaml/,
    key: "channels.telegram.bot_token",
  },
  {
    name: "Telegram token from an empty ${TELEGRAM_BOT_TOKEN:-}",
    text: (p) => `${base(p)}channels:\n  telegram:\n    enabled: true\n    bot_token: \${TELEGRAM_BOT_TOKEN:-}\n`,
    line: /^channels\.telegram\.bot_token: .*or set TELEGRAM_BOT_TOKEN/,
    key: "channels.telegram.bot_token",
    env: { TELEGRAM_BOT_TOKEN: "" },
  },
  {
    name: "Telegram webhook mode without its URL and secret",
    text: (p) => `${base(p)}channels:\n  telegram:\n    enabled: true\n    mode: webhook\n    bot_token: "123:abc"\n`,
    line: /^channels\.telegram\.webhook_url, channels\.telegram\.webhook_secret: required in webhook mode/,
    key: "channels.telegram.webhook_url",
  },
  {
    name: "Slack socket mode without bot_token and app_token (both named)",
    text: (p) => `${base(p)}channels:\n  slack:\n    enabled: true\n`,
    line: /^channels\.slack\.bot_token, channels\.slack\.app_token: required in socket mode .*write bot_token and app_token/,
    key: "channels.slack.app_token",
  },
  {
    name: "Slack socket mode with bot_token but no app_token",
    text: (p) => `${base(p)}channels:\n  slack:\n    enabled: true\n    bot_token: xoxb-1\n`,
    line: /^channels\.slack\.app_token: required in socket mode/,
    key: "channels.slack.app_token",
  },
  {
    name: "Slack webhook mode without its signing secret",
    text: (p) => `${base(p)}channels:\n  slack:\n    enabled: true\n    mode: webhook\n    bot_token: xoxb-1\n`,
    line: /^channels\.slack\.signing_secret: required in webhook mode/,
    key: "channels.slack.signing_secret",
  },
  {
    name: "Feishu without app_id and app_secret",
    text: (p) => `${base(p)}channels:\n  feishu:\n    enabled: true\n`,
    line: /^channels\.feishu\.app_id, channels\.feishu\.app_secret: required .*write app_id and app_secret/,
    key: "channels.feishu.app_id",
  },
  {
    name: "DingTalk without client_id and client_secret",
    text: (p) => `${base(p)}channels:\n  dingtalk:\n    enabled: true\n`,
    line: /^channels\.dingtalk\.client_id, channels\.dingtalk\.client_secret: required /,
    key: "channels.dingtalk.client_id",
  },
  {
    name: "Discord without its token",
    text: (p) => `${base(p)}channels:\n  discord:\n    enabled: true\n`,
    line: /^channels\.discord\.bot_token: required .*write bot_token under channels\.discord/,
    key: "channels.discord.bot_token",
  },
  {
    name: "a wrong type in a disabled block",
    text: (p) => `${base(p)}channels:\n  telegram:\n    enabled: false\n    require_mention: yes-please\n`,
    line: /^channels\.telegram\.require_mention: must be a boolean, not string "yes-please": change the value/,
    key: "channels.telegram.require_mention",
  },
  {
    name: "an unknown key in a disabled block",
    text: (p) => `${base(p)}channels:\n  discord:\n    enabled: false\n    bot_tokn: abc\n`,
    line: /^channels\.discord\.bot_tokn: unknown key: did you mean `bot_token`\?/,
    key: "channels.discord.bot_tokn",
  },
  {
    name: "model: at the top level",
    text: (p) => `${base(p)}model: gpt-4o-mini\n`,
    line: /^model: unknown key: did you mean `models`\?/,
    key: "model",
  },
  {
    name: "use: slak",
    text: (p) => `${base(p)}channels:\n  team:\n    enabled: true\n    use: slak\n`,
    line: /^channels\.team\.use: "slak" is not a built-in channel: did you mean slack\?/,
    key: "channels.team.use",
  },
  {
    name: "agent.model names no model",
    text: (p) => `${base(p)}agent:\n  model: gpt4\n`,
    line: /^agent\.model: no model named "gpt4" under models: \(known models: default\)/,
    key: "agent.model",
  },
  {
    name: "an agent names an unknown tool",
    text: (p) => `${base(p)}agent:\n  tools: [web_search]\n`,
    line: /^agent\.tools\[0\]: no tool named "web_search" under tools:/,
    key: "agent.tools[0]",
  },
  {
    name: "an agent names an unknown MCP server",
    text: (p) => `${base(p)}agent:\n  mcp_servers: [files]\n`,
    line: /^agent\.mcp_servers\[0\]: no server named "files" under mcp_servers:/,
    key: "agent.mcp_servers[0]",
  },
  {
    name: "a route names an unknown agent",
    text: (p) => `${base(p)}routes:\n  - { channel: web, agent: sales }\n`,
    line: /^routes\[0\]\.agent: no agent named "sales"/,
    key: "routes[0].agent",
  },
  {
    name: "a duplicate YAML key",
    text: (p) => `${base(p)}channels:\n  telegram:\n    enabled: true\n    enabled: false\n`,
    line: /config\.yaml:\d+:\d+: the key "enabled" appears twice in one mapping: keep one of them/,
    key: '"enabled"',
  },
  {
    name: "an empty config",
    text: () => "",
    line: /^models: no model configured in \S+config\.yaml: add one under models:/,
    key: "models",
  },
  {
    name: "a misspelt server key",
    text: (p) => base(p, `server:\n  prot: ${p.server}\n`),
    line: /^server\.prot: unknown key: did you mean `port`\?/,
    key: "server.prot",
  },
  {
    name: "a model without its model id",
    text: (p) => `server:\n  port: ${p.server}\nstorage:\n  path: ./antler.db\nmodels:\n  - name: default\n`,
    line: /^models\[0\]\.model: is required: add it/,
    key: "models[0].model",
  },
  {
    name: "storage.path cannot be written",
    text: (p) => base(p).replace("path: ./antler.db", "path: /dev/null/antler/antler.db"),
    line: /^storage\.path: \/dev\/null\/antler\/antler\.db cannot be written \(\/dev\/null is not a folder\): point storage\.path at a writable file/,
    key: "storage.path",
  },
  {
    name: "PostgreSQL storage that is not reachable",
    text: (p) => base(p).replace("path: ./antler.db", `kind: postgres\n  url: postgres://antler@127.0.0.1:${p.closed}/antler`),
    line: /^storage\.url: PostgreSQL is not reachable there \(ECONNREFUSED\): start the database or fix storage\.url/,
    key: "storage.url",
  },
  {
    name: "an unset ${VAR} without a default",
    text: (p) => `${base(p)}    api_key: \${ANTLER_TEST_UNSET_KEY}\n`,
    line: /^models\[0\]\.api_key: environment variable ANTLER_TEST_UNSET_KEY is not set/,
    key: "models[0].api_key",
    env: { ANTLER_TEST_UNSET_KEY: undefined },
  },
];
