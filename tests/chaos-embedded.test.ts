import { chaosSuite } from "./support/delivery-chaos.ts";

// The embedded bus: submissions restarted mid-run stands in for the broker's outage.
chaosSuite("embedded", async () => ({
  env: { KAFKA_BROKERS: "" },
  stop: async () => {},
  faults: [
    {
      fraction: 0.5,
      inject: async (sys) => {
        await sys.system.restart("submissions");
      },
    },
  ],
}));
