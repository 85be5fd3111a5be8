/** An outcome as the client received it: status code, allow-listed headers, exact body bytes. */
export interface StoredResponse {
  status: number;
  headers: [name: string, value: string][];
  body: Buffer;
}
