// The tables of `migrations/`, written by hand to match them.

diesel::table! {
    teams (id) {
        id -> Text,
        chat_webhook_url -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    users (id) {
        id -> Text,
        email -> Nullable<Text>,
        first_name -> Nullable<Text>,
        last_name -> Nullable<Text>,
        image_url -> Nullable<Text>,
        provider_updated_at -> Nullable<Int8>,
        deleted_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    memberships (user_id, team_id) {
        user_id -> Text,
        team_id -> Text,
        role -> Text,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    locations (id) {
        id -> Uuid,
        team_id -> Text,
        name -> Text,
        slug -> Text,
        timezone -> Text,
        scheduler_location_id -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    job_runs (id) {
        id -> Uuid,
        job -> Text,
        correlation_id -> Uuid,
        started_at -> Timestamptz,
        finished_at -> Nullable<Timestamptz>,
        status -> Text,
        summary -> Jsonb,
    }
}

diesel::joinable!(memberships -> users (user_id));
diesel::joinable!(memberships -> teams (team_id));
diesel::joinable!(locations -> teams (team_id));

diesel::allow_tables_to_appear_in_same_query!(teams, users, memberships, locations, job_runs);
