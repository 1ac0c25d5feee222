/** Client-library workloads (issue 4); a no-op until the client exists. */
export async function clientWorkloads() {}
