-- AlterTable
ALTER TABLE "ProgramVersion" ADD COLUMN     "providerPins" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "Provider" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT,
    "scope" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Provider_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProviderVersion" (
    "id" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "tenantId" TEXT,
    "version" TEXT NOT NULL,
    "major" INTEGER NOT NULL,
    "minor" INTEGER NOT NULL,
    "patch" INTEGER NOT NULL,
    "prerelease" TEXT NOT NULL DEFAULT '',
    "text" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "publishedById" TEXT,
    "publishedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "yankedAt" TIMESTAMP(3),
    "yankReason" TEXT,

    CONSTRAINT "ProviderVersion_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Provider_scope_name_key" ON "Provider"("scope", "name");

-- CreateIndex
CREATE INDEX "ProviderVersion_tenantId_idx" ON "ProviderVersion"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "ProviderVersion_providerId_version_key" ON "ProviderVersion"("providerId", "version");

-- AddForeignKey
ALTER TABLE "Provider" ADD CONSTRAINT "Provider_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProviderVersion" ADD CONSTRAINT "ProviderVersion_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "Provider"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ProviderVersion" ADD CONSTRAINT "ProviderVersion_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "Tenant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

