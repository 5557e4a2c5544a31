// The notices one channel carries, for tests of the triggers that send them.
import { createLogger } from "../logger.ts";
import { listenForNotices } from "../pg-notices.ts";

export interface ChannelRecorder {
  /**
   * The notices received since the last call, once `expected` have come (or 2 s passed) and 50 ms more
   * went by, so a notice that should not come has had as long as the ones that did.
   */
  settled(expected: number): Promise<string[]>;
  stop(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Listens on `channel` of the database and resolves once the LISTEN is in place. */
export async function recordChannel(databaseUrl: string, channel: string): Promise<ChannelRecorder> {
  const notices: string[] = [];
  let listening = false;
  const listener = listenForNotices({
    databaseUrl,
    channel,
    logger: createLogger("notices-test", "silent"),
    onNotice: (notice) => notices.push(notice),
    onListening: () => (listening = true),
    onLost: () => (listening = false),
  });
  for (let i = 0; i < 500 && !listening; i++) await pause(10);
  if (!listening) throw new Error(`not listening on ${channel} after 5 s`);
  return {
    async settled(expected) {
      for (let i = 0; i < 200 && notices.length < expected; i++) await pause(10);
      await pause(50);
      return notices.splice(0);
    },
    stop: () => listener.stop(),
  };
}
