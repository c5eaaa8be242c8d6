import { agentArtifact } from './procedures/agent/artifact.js';
import { agentCreateEnrollmentToken } from './procedures/agent/create-enrollment-token.js';
import { agentEnroll } from './procedures/agent/enroll.js';
import { agentGet } from './procedures/agent/get.js';
import { agentList } from './procedures/agent/list.js';
import { agentPoll } from './procedures/agent/poll.js';
import { agentReportStatus } from './procedures/agent/report-status.js';
import { agentUploadOutputs } from './procedures/agent/upload-outputs.js';
import { agentReportProfile } from './procedures/agent/report-profile.js';
import { agentRevoke } from './procedures/agent/revoke.js';
import { agentSetLabels } from './procedures/agent/set-labels.js';
import { agentSelf } from './procedures/agent/self.js';
import { agentReportLive } from './procedures/agent/report-live.js';
import { agentWaitLive } from './procedures/agent/wait-live.js';
import { liveGet } from './procedures/live/get.js';
import { liveLimits } from './procedures/live/limits.js';
import { liveList } from './procedures/live/list.js';
import { liveOutputs } from './procedures/live/outputs.js';
import { liveSetLimits } from './procedures/live/set-limits.js';
import { liveStart } from './procedures/live/start.js';
import { liveStop } from './procedures/live/stop.js';
import { auditList } from './procedures/audit/list.js';
import { authAcceptInvitation } from './procedures/auth/accept-invitation.js';
import { authLogin } from './procedures/auth/login.js';
import { authSetPassword } from './procedures/auth/set-password.js';
import { deploymentCreate } from './procedures/deployment/create.js';
import { deploymentGet } from './procedures/deployment/get.js';
import { deploymentList } from './procedures/deployment/list.js';
import { deploymentOutputs } from './procedures/deployment/outputs.js';
import { deploymentPreview } from './procedures/deployment/preview.js';
import { deploymentStop } from './procedures/deployment/stop.js';
import { health } from './procedures/health.js';
import { outputEvents } from './procedures/output/events.js';
import { outputLatest } from './procedures/output/latest.js';
import { outputSeriesProcedure } from './procedures/output/series.js';
import { outputWatch } from './procedures/output/watch.js';
import { kernelGet } from './procedures/kernel/get.js';
import { kernelList } from './procedures/kernel/list.js';
import { kernelUpload } from './procedures/kernel/upload.js';
import { memberInvitations } from './procedures/member/invitations.js';
import { memberInvite } from './procedures/member/invite.js';
import { memberRevokeInvitation } from './procedures/member/revoke-invitation.js';
import { memberList } from './procedures/member/list.js';
import { memberRemove } from './procedures/member/remove.js';
import { memberSetRole } from './procedures/member/set-role.js';
import { compatJob, compatJobs } from './procedures/compat/job.js';
import { compatMatrixProcedure } from './procedures/compat/matrix.js';
import { compatCellProcedure } from './procedures/compat/cell.js';
import { compatGridProcedure } from './procedures/compat/grid.js';
import { compatSetSettings, compatSettings } from './procedures/compat/settings.js';
import { kernelEvents } from './procedures/kernel/events.js';
import { kernelFormat } from './procedures/kernel/format.js';
import { kernelFormatsFor } from './procedures/kernel/formats-for.js';
import { kernelDiff } from './procedures/kernel/diff.js';
import { kernelDelete } from './procedures/kernel/delete.js';
import { programGet } from './procedures/program/get.js';
import { programList } from './procedures/program/list.js';
import { programPublish } from './procedures/program/publish.js';
import { versionGet } from './procedures/version/get.js';
import { versionList } from './procedures/version/list.js';
import { versionSpec } from './procedures/version/spec.js';
import { versionYank } from './procedures/version/yank.js';
import { tenantCreate } from './procedures/tenant/create.js';
import { tokenCreate } from './procedures/token/create.js';
import { tokenList } from './procedures/token/list.js';
import { tokenRevoke } from './procedures/token/revoke.js';
import { providerCoverage } from './procedures/provider/coverage.js';
import { providerGet } from './procedures/provider/get.js';
import { providerList } from './procedures/provider/list.js';
import { providerPinnedBy } from './procedures/provider/pinned-by.js';
import { providerPublish, providerPublishInstance } from './procedures/provider/publish.js';
import { providerYank, providerYankInstance } from './procedures/provider/yank.js';
import { whoami } from './procedures/whoami.js';
import { createCallerFactory, router } from './trpc.js';

/** Every procedure of the registry API, named `domain.verb`. */
export const appRouter = router({
  health,
  whoami,
  tenant: router({ create: tenantCreate }),
  auth: router({ login: authLogin, setPassword: authSetPassword, acceptInvitation: authAcceptInvitation }),
  token: router({ create: tokenCreate, list: tokenList, revoke: tokenRevoke }),
  member: router({
    invite: memberInvite,
    invitations: memberInvitations,
    revokeInvitation: memberRevokeInvitation,
    list: memberList,
    remove: memberRemove,
    setRole: memberSetRole,
  }),
  audit: router({ list: auditList }),
  agent: router({
    artifact: agentArtifact,
    createEnrollmentToken: agentCreateEnrollmentToken,
    enroll: agentEnroll,
    get: agentGet,
    list: agentList,
    poll: agentPoll,
    reportProfile: agentReportProfile,
    reportStatus: agentReportStatus,
    revoke: agentRevoke,
    self: agentSelf,
    setLabels: agentSetLabels,
    uploadOutputs: agentUploadOutputs,
    waitLive: agentWaitLive,
    reportLive: agentReportLive,
  }),
  live: router({ start: liveStart, get: liveGet, outputs: liveOutputs, stop: liveStop, list: liveList, limits: liveLimits, setLimits: liveSetLimits }),
  deployment: router({ create: deploymentCreate, preview: deploymentPreview, list: deploymentList, get: deploymentGet, stop: deploymentStop, outputs: deploymentOutputs }),
  kernel: router({ list: kernelList, get: kernelGet, upload: kernelUpload, diff: kernelDiff, events: kernelEvents, format: kernelFormat, formatsFor: kernelFormatsFor, delete: kernelDelete }),
  program: router({ list: programList, get: programGet, publish: programPublish }),
  provider: router({ list: providerList, get: providerGet, pinnedBy: providerPinnedBy, coverage: providerCoverage, publish: providerPublish, yank: providerYank, publishInstance: providerPublishInstance, yankInstance: providerYankInstance }),
  version: router({ list: versionList, get: versionGet, spec: versionSpec, yank: versionYank }),
  output: router({ latest: outputLatest, series: outputSeriesProcedure, events: outputEvents, watch: outputWatch }),
  compat: router({
    matrix: compatMatrixProcedure,
    grid: compatGridProcedure,
    cell: compatCellProcedure,
    job: compatJob,
    jobs: compatJobs,
    settings: compatSettings,
    setSettings: compatSetSettings,
  }),
});

/** The router's type: the only thing of the registry the CLI, agent and web app import (type-only). */
export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
