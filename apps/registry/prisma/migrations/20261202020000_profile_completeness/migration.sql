-- AlterTable
ALTER TABLE "Tenant" ADD COLUMN     "strictCharSign" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "KernelProfile" ADD COLUMN     "complete" BOOLEAN NOT NULL DEFAULT true;


-- A trace.dat holds only the events it recorded: the profiles stored before this migration that
-- came from one are partial.
UPDATE "KernelProfile" SET "complete" = false WHERE "source" = 'trace_dat';
