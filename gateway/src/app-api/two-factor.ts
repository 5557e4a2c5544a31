// The app's routes of a person's second factor, and of an owner's requirement of one. They are served to a
// session whose person must turn one on first (refuseUntilSecondFactor lets nothing else through).
//
//   GET  /account/two-factor                         {enabled, recoveryCodesLeft, requiredBy}
//   POST /account/two-factor/enrolment               {secret, uri, qrCodeSvg}: a new authenticator to confirm
//   POST /account/two-factor/confirm {code}          {recoveryCodes}: on, with ten recovery codes shown once
//   POST /account/two-factor/recovery-codes {code}   {recoveryCodes}: new ones, the old ones dead
//   POST /account/two-factor/disable {code}          204
//   PUT  /workspaces/:id/two-factor {required}       {workspace} (the owner)
import { type Request, type Response, type Router } from "express";
import QRCode from "qrcode";
import { z } from "zod";
import { appWorkspaceJson } from "@formsvc/api-records";
import { asCaller } from "@formsvc/platform/caller.ts";
import type { User } from "@formsvc/proto/identity/v1/identity_pb.js";
import { twoFactorActions } from "../audit/actions.ts";
import { recordAppEvent, type AuditTrail } from "../audit/trail.ts";
import type { GatewayDeps } from "../deps.ts";
import { parse } from "../routes/route.ts";
import { newRouter } from "../routing.ts";

const codeSchema = z.strictObject({ code: z.string().trim().min(1, "is required").max(40) });
const requirementSchema = z.strictObject({ required: z.boolean() });

export function twoFactorRoutes(identity: GatewayDeps["identity"], audit?: AuditTrail): Router {
  const router = newRouter();
  const caller = (res: Response) => asCaller((res.locals.user as User).id);
  const noStore = (res: Response) => res.setHeader("Cache-Control", "no-store");
  /** Records a change of the person's second factor (in each of their workspaces' logs), or of a workspace's requirement. */
  const record = (req: Request, res: Response, action: string, scope: { workspaceId: string } | { personal: true }, changes: { field: string; value?: string }[] = []) => {
    const userId = (res.locals.user as User).id;
    const target = "workspaceId" in scope ? { targetType: "workspace", targetId: scope.workspaceId } : { targetType: "user", targetId: userId };
    recordAppEvent(audit, req, res, { actor: { type: "user", userId }, action, ...target, scope, changes });
  };

  router.get("/account/two-factor", async (_req, res) => {
    const { enabled, recoveryCodesLeft, requiredBy } = await identity.getTwoFactorStatus({}, caller(res));
    noStore(res);
    res.json({ enabled, recoveryCodesLeft, requiredBy });
  });

  router.post("/account/two-factor/enrolment", async (_req, res) => {
    const { secret, uri } = await identity.beginTwoFactorEnrolment({}, caller(res));
    noStore(res);
    res.json({ secret, uri, qrCodeSvg: await QRCode.toString(uri, { type: "svg", margin: 1, errorCorrectionLevel: "M" }) });
  });

  router.post("/account/two-factor/confirm", async (req, res) => {
    const { code } = parse(codeSchema, req.body ?? {}, "body");
    const { recoveryCodes } = await identity.confirmTwoFactorEnrolment({ code }, caller(res));
    record(req, res, twoFactorActions.enable, { personal: true });
    noStore(res);
    res.json({ recoveryCodes });
  });

  router.post("/account/two-factor/recovery-codes", async (req, res) => {
    const { code } = parse(codeSchema, req.body ?? {}, "body");
    const { recoveryCodes } = await identity.regenerateRecoveryCodes({ code }, caller(res));
    record(req, res, twoFactorActions.recoveryCodes, { personal: true });
    noStore(res);
    res.json({ recoveryCodes });
  });

  router.post("/account/two-factor/disable", async (req, res) => {
    const { code } = parse(codeSchema, req.body ?? {}, "body");
    await identity.disableTwoFactor({ code }, caller(res));
    record(req, res, twoFactorActions.disable, { personal: true });
    res.status(204).end();
  });

  router.put("/workspaces/:id/two-factor", async (req, res) => {
    const { required } = parse(requirementSchema, req.body ?? {}, "body");
    const user = res.locals.user as User;
    const { workspace } = await identity.setWorkspaceTwoFactorRequirement({ workspaceId: String(req.params.id), required }, caller(res));
    record(req, res, twoFactorActions.requirement, { workspaceId: workspace!.id }, [{ field: "required", value: String(required) }]);
    res.json({ workspace: appWorkspaceJson(workspace!, user.id) });
  });

  return router;
}
