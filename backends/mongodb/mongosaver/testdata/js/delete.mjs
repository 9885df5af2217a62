// delete.mjs DATABASE THREAD
//
// Deletes THREAD with JS LangGraph's MongoDBSaver.deleteThread (which takes
// no memvault lease) and prints [].

import { main } from "./lib.mjs";

await main(async (saver) => {
  await saver.deleteThread(process.argv[3]);
  return [];
});
