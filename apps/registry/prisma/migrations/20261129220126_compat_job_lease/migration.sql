-- AlterTable
ALTER TABLE "CompatJob" ADD COLUMN     "leaseUntil" TIMESTAMP(3);

