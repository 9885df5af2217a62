// read.mjs DATABASE THREAD
//
// Prints JS LangGraph's MongoDBSaver reading of THREAD (list, newest
// first) as one JSON line.

import { listThread, main } from "./lib.mjs";

await main(async (saver) => listThread(saver, process.argv[3]));
