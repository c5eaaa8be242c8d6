-- AlterTable
ALTER TABLE "Deployment" ADD COLUMN     "options" JSONB NOT NULL DEFAULT '{}';

