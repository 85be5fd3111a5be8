// Signs stdin as GitHub signs a webhook, with @octokit/webhooks (ESM only, so a process of its own
// for the suites Jest runs as CommonJS): prints the X-Hub-Signature-256 value for the secret argv[2].
import { Webhooks } from '@octokit/webhooks';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
process.stdout.write(await new Webhooks({ secret: process.argv[2] }).sign(Buffer.concat(chunks).toString('utf8')));
