import { Pool } from 'pg';

// One pool for the module and for Prisma: the module hands Prisma the key's connection from it.
export const pool = new Pool({ connectionString: process.env.DATABASE_URL });
