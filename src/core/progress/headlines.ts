/**
 * The compact headline of a running tool: words for what well-known tools do ("Searching the
 * web…"), else "Running <tool>…". A tool's own progress text, when it reported one, wins over
 * both (the tracker decides that).
 */
import { MAX_TITLE, oneLine } from "./args.js";

/** Tools whose calls the view does not list as tool calls: they show as the plan, a task or the question itself. */
export const PLAN_TOOL = "write_todos";
export const TASK_TOOL = "task";
export const QUESTION_TOOL = "ask_clarification";

const WELL_KNOWN: Array<[RegExp, string]> = [
  [
    /^((tavily|google|bing|brave|duckduckgo|ddg|serp|serper|exa|searx|searxng)_?(web_?)?search\w*|tavily_\w+|web_?search\w*|search_web|internet_search)$/i,
    "Searching the web…",
  ],
  [/^(search|lookup|query)$/i, "Searching…"],
  [/^(web_?fetch|fetch(_url|_page|_webpage)?|read_url|browse\w*|crawl\w*|scrape\w*|jina\w*|open_url)$/i, "Reading a web page…"],
  [/^(python(_repl)?|run_python|code_interpreter|execute_code|run_code|jupyter\w*)$/i, "Running code…"],
  [/^(bash|shell|sh|terminal|run_command|run_shell|execute|exec|command)$/i, "Running a command…"],
  [/^(read_file|read|view|cat|open_file|view_file)$/i, "Reading a file…"],
  [/^(write_file|create_file|save_file)$/i, "Writing a file…"],
  [/^(edit_file|str_replace\w*|apply_patch|patch|replace_in_file)$/i, "Editing a file…"],
  [/^(ls|list_dir|list_files|glob|grep|find|search_files|file_search)$/i, "Looking through files…"],
  [/^(send_file|present_files?)$/i, "Preparing a file…"],
  [/^(generate_image|image_gen\w*|dall_?e|text_to_image)$/i, "Creating an image…"],
  [/^(run_tests?|pytest|npm_test)$/i, "Running tests…"],
  [/^write_todos$/i, "Updating the plan…"],
];

/** What a running tool is doing, in the words the view shows. */
export function toolHeadline(name: string): string {
  for (const [pattern, words] of WELL_KNOWN) if (pattern.test(name)) return words;
  return `Running ${oneLine(name, MAX_TITLE)}…`;
}

/** What a running subagent task is doing. */
export function taskHeadline(description: string): string {
  return `Subagent: ${description}…`;
}
