-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN     "liveCpuBudgetPercent" INTEGER NOT NULL DEFAULT 10,
ADD COLUMN     "liveMaxDurationSeconds" INTEGER NOT NULL DEFAULT 300,
ADD COLUMN     "liveMaxSessions" INTEGER NOT NULL DEFAULT 4;

-- CreateTable
CREATE TABLE "LiveSession" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "target" JSONB NOT NULL,
    "startedById" TEXT NOT NULL,
    "startedByEmail" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "durationSeconds" INTEGER NOT NULL,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "cpuBudgetPercent" INTEGER NOT NULL,
    "endedAt" TIMESTAMP(3),
    "stoppedAt" TIMESTAMP(3),
    "stoppedById" TEXT,

    CONSTRAINT "LiveSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LiveSessionAgent" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'starting',
    "error" TEXT,
    "verdict" JSONB,
    "outputs" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LiveSessionAgent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LiveOutput" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "sessionId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LiveOutput_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LiveSession_tenantId_startedAt_idx" ON "LiveSession"("tenantId", "startedAt");

-- CreateIndex
CREATE INDEX "LiveSessionAgent_agentId_state_idx" ON "LiveSessionAgent"("agentId", "state");

-- CreateIndex
CREATE UNIQUE INDEX "LiveSessionAgent_sessionId_agentId_key" ON "LiveSessionAgent"("sessionId", "agentId");

-- CreateIndex
CREATE UNIQUE INDEX "LiveOutput_sessionId_agentId_seq_key" ON "LiveOutput"("sessionId", "agentId", "seq");

-- AddForeignKey
ALTER TABLE "LiveSession" ADD CONSTRAINT "LiveSession_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LiveSessionAgent" ADD CONSTRAINT "LiveSessionAgent_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LiveSessionAgent" ADD CONSTRAINT "LiveSessionAgent_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "LiveSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LiveSessionAgent" ADD CONSTRAINT "LiveSessionAgent_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LiveOutput" ADD CONSTRAINT "LiveOutput_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LiveOutput" ADD CONSTRAINT "LiveOutput_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "LiveSession"("id") ON DELETE CASCADE ON UPDATE CASCADE;

