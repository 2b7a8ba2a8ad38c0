/**
 * The Gateway connection: the discord.js client with the intents Antler needs, REST calls that
 * reject a rate limit instead of waiting (the core's retry is the only one), an optional Gateway
 * URL (tests point it at a fake), and what a failed login means in words an operator can act on.
 */
import { Client, GatewayIntentBits, Options, Partials, SimpleShardingStrategy } from "discord.js";
import { type ChannelError, errorMessage } from "../../errors.js";
import type { DiscordChannelConfig } from "./config.js";
import { gatewayCloseProblem, mapDiscordError } from "./map-error.js";

export function createGatewayClient(config: DiscordChannelConfig): Client {
  const gatewayUrl = config.gateway_url;
  return new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.DirectMessages,
      GatewayIntentBits.MessageContent,
    ],
    // DM channels are never announced, so their messages arrive for channels not cached.
    partials: [Partials.Channel],
    // One retry loop: the core's, which honours retry_after for every reply on the channel.
    rest: { api: config.api_base, rejectOnRateLimit: () => true, retries: 0 },
    makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 20 }),
    ...(gatewayUrl
      ? {
          ws: {
            buildStrategy: (manager) => {
              const fetchInfo = manager.fetchGatewayInformation.bind(manager);
              manager.fetchGatewayInformation = async (force?: boolean) => ({ ...(await fetchInfo(force)), url: gatewayUrl });
              return new SimpleShardingStrategy(manager);
            },
          },
        }
      : {}),
  });
}

/** Why `client.login` failed, typed: a refused intent or token gets the Gateway's own explanation. */
export function loginError(channel: string, err: unknown): ChannelError {
  const message = errorMessage(err);
  if (/disallowed intents/i.test(message)) return gatewayCloseProblem(channel, 4014) as ChannelError;
  if (/authentication failed/i.test(message)) return gatewayCloseProblem(channel, 4004) as ChannelError;
  return mapDiscordError(channel, err, "login");
}

/** `promise`, or the signal's reason as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
