-- Version 25: the deployment's workspaces, for the maintenance that runs in each of them (the trash's
-- purge, fastpad/knowledge/trash.py). `workspaces` is under forced row-level security, so the
-- application role can list no workspace it does not act in; this function, run as the owner,
-- returns their ids and nothing else (no name, no member), for the server's own schedule.

CREATE FUNCTION fastpad_workspace_ids()
RETURNS TABLE (id text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    SELECT w.id FROM workspaces w ORDER BY w.id
$$;
REVOKE ALL ON FUNCTION fastpad_workspace_ids() FROM PUBLIC;
